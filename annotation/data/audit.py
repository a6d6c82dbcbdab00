"""A project's audit log as people download it: one row per action, oldest first."""

from collections.abc import Iterator
from typing import Any

from annotation.models import Project


def audit_rows(project: Project) -> Iterator[dict[str, Any]]:
    log = project.audit_log.order_by("created_at", "id").values_list(
        "created_at", "actor__username", "action", "details"
    )
    for at, actor, action, details in log.iterator(chunk_size=2000):
        yield {"at": at.isoformat(), "actor": actor or "", "action": action, "details": details}
