from pathlib import Path
from typing import Any

from django.core.files.base import ContentFile
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.errors import DomainError, ImportRejected
from annotation.imports.published.datasets import DATASETS
from annotation.imports.published.services import PUBLISHED_FILES
from annotation.imports.services.running import import_now
from annotation.models import ImportJob, Project


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
        if len(options["files"]) > len(PUBLISHED_FILES):
            raise CommandError(f"{dataset.key} has at most {len(PUBLISHED_FILES)} files.")
        slug = options["project"] or dataset.key
        files = {
            field: ContentFile(path.read_bytes(), name=path.name)
            for field, path in zip(PUBLISHED_FILES, options["files"], strict=False)
        }
        wanted = {"dataset": dataset.key, "accept": not options["validate"]}
        try:
            result = import_now(
                project=Project.objects.filter(slug=slug).first(),
                user=None,
                kind=ImportJob.Kind.PUBLISHED,
                files=files,
                options=wanted | {"slug": slug, "name": options["name"]},
            )
        except ImportRejected as rejected:
            lines = [
                f"line {e.line}: {e.message}" if e.line else e.message for e in rejected.errors
            ]
            raise CommandError("\n".join(["Nothing was imported:", *lines])) from None
        except DomainError as error:
            raise CommandError(error.message) from None
        for warning in result["warnings"]:
            where = f"line {warning['line']}: " if warning["line"] else ""
            self.stderr.write(f"warning: {where}{warning['message']}")
        for note in result["notes"]:
            self.stdout.write(f"note: {note}")
        made = "Created" if result["project_created"] else "Into"
        self.stdout.write(f"{made} project {result['project']}. {result['summary']}")
        if not result["matches_paper"]:
            self.stdout.write(
                "The counts differ from the paper's: is every file the published one?"
            )
