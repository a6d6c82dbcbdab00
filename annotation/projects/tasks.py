"""The projects' Celery task, on the `imports` queue as every annotation task (annotation.tasks
registers it with the worker): the invitations' e-mails (services/invites.py queues them)."""

from celery import shared_task
from django.core.mail import send_mail

from annotation.models import Project


@shared_task  # on the imports queue, as every annotation task
def send_invites_task(project_id: int, invites: list[list[str]]) -> None:
    """E-mail each invitation's link to its address, on a worker."""
    project = Project.objects.get(pk=project_id)
    for email, link in invites:
        send_mail(
            f"You are invited to {project.name} on ContrastLab",
            f"Hello,\n\nYou are invited to the project {project.name} on ContrastLab. Follow "
            f"this link to accept (new accounts choose their password there; it works once):"
            f"\n\n{link}\n",
            None,
            [email],
        )
