"""The Data page's writes (docs/data.md): actions (bulk actions on a selection) and removal
(deletes, and the undo of an import, keeping what releases hold)."""
