"""Recount the validators' agreement counters of a project from its votes (docs/validation.md):
after a crash between a vote and its counters, say. Exact while no one votes."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project, ValidatorStatus
from annotation.validation.services.quality import counters_recounted, counters_repair


class Command(BaseCommand):
    help = "Recount the validators' resolved and agreed votes of a project from its votes."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("--check", action="store_true", help="report only; change nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {options['project']!r}.")
        differ = _differences(project) if options["check"] else counters_repair(project)
        for validator, (was, recount) in sorted(differ.items()):
            self.stdout.write(
                f"validator {validator}: resolved {was[0]} -> {recount[0]}, "
                f"agreed {was[1]} -> {recount[1]}"
            )
        if not differ:
            self.stdout.write("The counters match the votes.")
        else:
            verb = "differ" if options["check"] else "were recounted"
            self.stdout.write(f"{len(differ)} validators' counters {verb}.")


def _differences(project: Project) -> dict[int, tuple[tuple[int, int], tuple[int, int]]]:
    """{validator: (stored, recounted)} where they differ."""
    right = counters_recounted(project)
    rows = ValidatorStatus.objects.filter(project=project)
    stored = {
        v: (r, a) for v, r, a in rows.values_list("validator_id", "resolved_votes", "agreed_votes")
    }
    pairs = {v: (stored.get(v, (0, 0)), right.get(v, (0, 0))) for v in {*stored, *right}}
    return {v: pair for v, pair in pairs.items() if pair[0] != pair[1]}
