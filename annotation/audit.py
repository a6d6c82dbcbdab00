from typing import Any

from annotation.models import AuditLog, Project


def audit(*, actor: Any, action: str, project: Project | None = None, **details: Any) -> AuditLog:
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None
    return AuditLog.objects.create(project=project, actor=actor, action=action, details=details)
