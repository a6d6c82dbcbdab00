import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.errors import DomainError
from annotation.management.commands.import_examples import progress_bar
from annotation.models import Release
from annotation.text.parsing import parse_id
from evaluation.models import ModelSpec
from evaluation.runs.execute import run_evaluation
from evaluation.runs.results import COMPARED
from evaluation.runs.services import evaluation_enqueue


class Command(BaseCommand):
    help = "Score a release's split with a registered model, on the worker or right here."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--release", type=int, required=True, help="release id")
        parser.add_argument("--model", required=True, help="model id or name")
        parser.add_argument("--split", default="test")
        parser.add_argument(
            "--sync", action="store_true", help="run in this process; no broker or worker needed"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        release = Release.objects.filter(pk=options["release"]).first()
        if release is None:
            raise CommandError(f"no release with id {options['release']}.")
        specs = ModelSpec.objects.filter(project=release.project)
        key = options["model"]
        pk = parse_id(key)
        spec = (specs.filter(pk=pk) if pk is not None else specs.filter(name=key)).first()
        if spec is None:
            raise CommandError(f"no model {key!r} in project {release.project.slug}.")
        try:
            run = evaluation_enqueue(
                release=release,
                model=spec,
                split=options["split"],
                user=None,
                send=not options["sync"],
            )
        except DomainError as error:
            raise CommandError(error.message) from None
        if not options["sync"]:
            self.stdout.write(json.dumps({"run": run.pk, "status": run.status}))
            return
        finished = run_evaluation(
            run.pk, progress=lambda done, total: progress_bar("scoring", done, total)
        )
        if finished is None:
            raise CommandError(f"run {run.pk} was cancelled.")
        if finished.status != "succeeded":
            raise CommandError(f"run {finished.pk} {finished.status}: {finished.error}")
        # The headline figures its task type has (labels, free text or minimal pairs).
        summary = {name: finished.metrics[name] for name in COMPARED if name in finished.metrics}
        self.stdout.write(json.dumps({"run": finished.pk, "status": "succeeded", **summary}))
