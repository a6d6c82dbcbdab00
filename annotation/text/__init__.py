"""Text shared by every workflow: a project's answer rules and how answers match (answers,
with DROP's metric in drop), edit statistics and diffs (edits), a field's value as its kind
shows it (fields), what people type and upload read strictly (parsing), and CSV/TSV cells and
rows that no spreadsheet runs as formulas (cells)."""
