import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.errors import DomainError
from annotation.models import Project
from annotation.releases.services import release_create


def split_numbers(text: str, kind: type) -> dict[str, Any]:
    """ "dev=0.2,test=0.8" -> {"dev": 0.2, "test": 0.8}."""
    out = {}
    for part in filter(None, text.split(",")):
        split, sep, value = part.partition("=")
        if not sep:
            raise CommandError(f"{part!r} must look like split=value.")
        out[split.strip()] = kind(value)
    return out


class Command(BaseCommand):
    help = "Publish an immutable release of a project's accepted contrast sets."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("version")
        parser.add_argument("--split-strategy", choices=["pivot", "random"], default="pivot")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--proportions", default="", help="e.g. dev=0.2,test=0.8")
        parser.add_argument("--min-agreement", default="", help="e.g. test=4,dev=3")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {options['project']!r}.")
        try:
            release = release_create(
                project=project,
                user=None,
                version=options["version"],
                split_strategy=options["split_strategy"],
                seed=options["seed"],
                proportions=split_numbers(options["proportions"], float) or None,
                min_agreement=split_numbers(options["min_agreement"], int) or None,
            )
        except DomainError as error:
            raise CommandError(error.message) from None
        self.stdout.write(
            json.dumps({"release": release.pk, "bundle": release.bundle, "counts": release.counts})
        )
