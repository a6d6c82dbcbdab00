import json
import sys
from pathlib import Path
from typing import Any

from django.core.files.base import ContentFile
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.errors import ImportRejected
from annotation.imports.services.running import import_now
from annotation.models import ImportJob, Project


def progress_bar(stage: str, done: int, total: int) -> None:
    width = 30
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r{stage:<8} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


class Command(BaseCommand):
    help = "Import originals into a project from JSONL, CSV or TSV (all rows or none)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", choices=["jsonl", "csv", "tsv"])
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="TARGET=COLUMN",
            help="map a column to a field, label, id or split; repeatable",
        )
        parser.add_argument("--split", default="test", help="split for rows without one")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {options['project']!r}.")
        mapping = {}
        for item in options["map"]:
            target, sep, column = item.partition("=")
            if not sep:
                raise CommandError(f"--map {item!r} must look like TARGET=COLUMN.")
            mapping[target] = column
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path} is not a file.")
        try:
            answer = import_now(
                project=project,
                user=None,
                kind=ImportJob.Kind.ORIGINALS,
                files={"file": ContentFile(path.read_bytes(), name=path.name)},
                options={
                    "fmt": options["format"],
                    "mapping": mapping,
                    "default_split": options["split"],
                    "progress": None if options["no_progress"] else progress_bar,
                },
            )
        except ImportRejected as rejected:
            for error in rejected.errors:
                where = f"line {error.line}" if error.line else "file"
                self.stderr.write(f"{path.name}: {where}: {error.message}")
            raise CommandError(
                f"rejected {path.name}: {len(rejected.errors)} problem(s); nothing was imported."
            ) from None
        self.stdout.write(
            json.dumps(
                {"batch": answer["batch"], "imported": answer["imported"], "project": project.slug}
            )
        )
