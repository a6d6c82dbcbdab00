"""The results table: every model on every release of the projects a user administers."""
