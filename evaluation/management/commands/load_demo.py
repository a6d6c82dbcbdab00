from typing import Any

from django.core.management.base import BaseCommand

from annotation.demo import DEMO_USERS, load_demo
from annotation.models import Project
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs.execute import run_evaluation
from evaluation.runs.scoring import PythonCallable
from evaluation.runs.services import evaluation_enqueue
from evaluation.specs.services import model_register


class Command(BaseCommand):
    help = "Create or refresh the demo projects, their users, release and run (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        result = load_demo()
        runs = load_demo_runs(result["project"], result["admin"])
        for project in result["projects"]:
            count = project.examples.count()
            self.stdout.write(f"Demo project '{project.name}' ({count} originals).")
        for run in runs:
            self.stdout.write(
                f"Demo evaluation run #{run.pk}: {run.model.name} on release "
                f"{run.release.version}, consistency {run.metrics['consistency']:.0%}."
            )
        self.stdout.write(f"Demo users (password for all: {result['password']}):")
        for username, roles in DEMO_USERS.items():
            self.stdout.write(f"  {username:<12} {', '.join(roles)}")


DEMO_MODELS = {
    "Keyword baseline": "evaluation.runners.keyword:keyword",
    "Keyword with negation": "evaluation.runners.keyword:keyword_with_negation",
}


def load_demo_runs(project: Project, admin: Any) -> list[EvaluationRun]:
    """Register the demo's two keyword models and score the project's first release with
    each, once. Returns their runs."""
    release = project.releases.order_by("created_at").first()
    if release is None:
        return []
    runs = []
    for name, source in DEMO_MODELS.items():
        spec = ModelSpec.objects.filter(project=project, name=name).first()
        if spec is None:
            spec = model_register(
                project=project, user=admin, name=name, kind=PythonCallable.name, source=source
            )
        done = EvaluationRun.objects.filter(model=spec, status=EvaluationRun.Status.SUCCEEDED)
        if not done.exists():
            run = evaluation_enqueue(
                release=release, model=spec, split="test", user=admin, send=False
            )
            run_evaluation(run.pk)
        runs.append(done.get())
    return runs
