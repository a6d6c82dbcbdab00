from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.errors import DomainError, ImportRejected
from annotation.imports.published.datasets import DATASETS
from annotation.imports.published.services import import_published
from annotation.models import Project


class Command(BaseCommand):
    help = (
        "Import a contrast set published with Gardner et al. (2020) from its own files, in the "
        "order its repository names them (docs/published/); creates the project if needed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dataset", choices=sorted(DATASETS))
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--project", default="", help="project slug (default: the dataset)")
        parser.add_argument(
            "--name", default="", help="a new project's name (default: the dataset's template's)"
        )
        parser.add_argument(
            "--validate", action="store_true", help="send the sets to validation, not accepted"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        dataset = DATASETS[options["dataset"]]
        for path in options["files"]:
            if not path.is_file():
                raise CommandError(f"{path} is not a file.")
        slug = options["project"] or dataset.key
        try:
            result = import_published(
                dataset=dataset.key,
                files=[(path.name, path.read_bytes()) for path in options["files"]],
                user=None,
                project=Project.objects.filter(slug=slug).first(),
                slug=slug,
                name=options["name"],
                accept=not options["validate"],
            )
        except ImportRejected as rejected:
            lines = [
                f"line {e.line}: {e.message}" if e.line else e.message for e in rejected.errors
            ]
            raise CommandError("\n".join(["Nothing was imported:", *lines])) from None
        except DomainError as error:
            raise CommandError(error.message) from None
        for warning in result.warnings:
            where = f"line {warning.line}: " if warning.line else ""
            self.stderr.write(f"warning: {where}{warning.message}")
        for note in result.notes:
            self.stdout.write(f"note: {note}")
        made = "Created" if result.project_created else "Into"
        self.stdout.write(f"{made} project {result.project.slug}. {result.summary()}")
        if not result.matches_paper:
            self.stdout.write(
                "The counts differ from the paper's: is every file the published one?"
            )
