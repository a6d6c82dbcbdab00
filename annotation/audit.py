from typing import Any

from annotation.models import AuditLog, Project, user_or_none


def audit(*, actor: Any, action: str, project: Project | None = None, **details: Any) -> AuditLog:
    return AuditLog.objects.create(
        project=project, actor=user_or_none(actor), action=action, details=details
    )
