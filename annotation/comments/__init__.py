"""Comments: a thread on each perturbation and dispute (docs/workflows.md, "Comments")."""
