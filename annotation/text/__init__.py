"""Text shared by every workflow: edit statistics and diffs (edits), and a field's value as
its kind shows it (fields)."""
