from typing import Any

from django.core.management.base import BaseCommand

from annotation.demo import DEMO_USERS, load_demo


class Command(BaseCommand):
    help = "Create or refresh the demo projects and their users (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        result = load_demo()
        for project in result["projects"]:
            count = project.examples.count()
            self.stdout.write(f"Demo project '{project.name}' ({count} originals).")
        self.stdout.write(f"Demo users (password for all: {result['password']}):")
        for username, roles in DEMO_USERS.items():
            self.stdout.write(f"  {username:<12} {', '.join(roles)}")
