import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.errors import DomainError
from annotation.models import Release
from annotation.text.parsing import parse_id
from evaluation.analyses.execute import run_analysis
from evaluation.analyses.services import analysis_create
from evaluation.models import EvaluationRun, ModelSpec


class Command(BaseCommand):
    help = "Run an analysis (instability, artifacts, inoculation) on the worker or right here."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=["instability", "artifacts", "inoculation"])
        parser.add_argument("--runs", type=int, nargs="+", help="instability: run ids")
        parser.add_argument("--release", type=int, help="artifacts, inoculation: release id")
        parser.add_argument("--split", default="test", help="artifacts: the split to read")
        parser.add_argument("--model", help="inoculation: model id or name")
        parser.add_argument("--pool-split", default="dev")
        parser.add_argument("--sizes", type=int, nargs="+", default=[0, 50, 100])
        parser.add_argument("--learning-rates", type=float, nargs="+", default=[1e-5, 3e-5])
        parser.add_argument("--max-epochs", type=int, default=10)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--delta", type=float, default=2.0, help="percentage points")
        parser.add_argument(
            "--sync", action="store_true", help="run in this process; no broker or worker needed"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        kind = options["kind"]
        if kind == "instability":
            runs = EvaluationRun.objects.filter(pk__in=options["runs"] or []).select_related(
                "release__project"
            )
            if not runs:
                raise CommandError("name the runs: --runs ID ID ...")
            project = runs[0].release.project
            params: dict[str, Any] = {"runs": options["runs"]}
        else:
            release = Release.objects.filter(pk=options["release"] or 0).first()
            if release is None:
                raise CommandError(f"no release with id {options['release']}.")
            project = release.project
            params = {"release": release.pk, "split": options["split"]}
        if kind == "inoculation":
            specs = ModelSpec.objects.filter(project=project)
            key, pk = options["model"] or "", parse_id(options["model"])
            spec = (specs.filter(pk=pk) if pk is not None else specs.filter(name=key)).first()
            if spec is None:
                raise CommandError(f"no model {key!r} in project {project.slug}.")
            params = {
                "release": params["release"],
                "model": spec.pk,
                "pool_split": options["pool_split"],
                "sizes": options["sizes"],
                "learning_rates": options["learning_rates"],
                "max_epochs": options["max_epochs"],
                "seed": options["seed"],
                "delta": options["delta"],
            }
        try:
            analysis = analysis_create(
                project=project, user=None, kind=kind, params=params, send=not options["sync"]
            )
        except DomainError as error:
            raise CommandError(error.message) from None
        if not options["sync"]:
            self.stdout.write(json.dumps({"analysis": analysis.pk, "status": analysis.status}))
            return
        finished = run_analysis(analysis.pk)
        if finished is None or finished.status != "succeeded":
            status = finished.status if finished else "cancelled"
            raise CommandError(f"analysis {analysis.pk} {status}: {finished and finished.error}")
        self.stdout.write(json.dumps({"analysis": finished.pk, "result": finished.result}))
