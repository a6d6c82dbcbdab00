"""Pages of evaluation runs: start one, follow it, read its results, compare two. Admins only;
everyone else gets 404. The progress bar serves analyses too (job_progress, given the JobPages
of the job's kind); cancel and retry are every job's (annotation.jobs.pages.job_action)."""

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotation.errors import DomainError, ImportRejected, flash_refusal
from annotation.jobs.pages import JobPages
from annotation.models.config import SPLITS
from annotation.text.parsing import parse_id
from evaluation.access import admin_project
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs import compare, results, services
from evaluation.runs.predictions import PredictionsFile
from evaluation.runs.served import Served


@login_required
def runs_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = admin_project(request.user, slug)
    releases = project.releases.all()
    specs = ModelSpec.objects.filter(project=project).exclude(kind=PredictionsFile.name)
    errors: list[Any] = []
    if request.method == "POST":
        release = releases.filter(pk=parse_id(request.POST.get("release")) or 0).first()
        model = specs.filter(pk=parse_id(request.POST.get("model")) or 0).first()
        upload = request.FILES.get("predictions")
        split = request.POST.get("split", "test")
        try:
            if release is not None and upload is not None:
                run = services.predictions_enqueue(
                    release=release, split=split, upload=upload, user=request.user
                )
            elif release is not None and model is not None:
                shards = parse_id(request.POST.get("shards") or "1")
                if shards is None:
                    raise DomainError("Shards must be a whole number from 1 to 64.")
                run = services.evaluation_enqueue(
                    release=release,
                    model=model,
                    split=split,
                    user=request.user,
                    shards=shards,
                    reuse_answers=request.POST.get("fresh") != "on",
                )
            else:
                raise DomainError("Choose a release, and a model or a predictions file.")
        except ImportRejected as rejected:
            errors = rejected.errors
        except DomainError as error:
            flash_refusal(request, error)
        else:
            return redirect("run", slug=slug, pk=run.pk)
    runs = EvaluationRun.objects.filter(release__project=project).select_related("release", "model")
    # The splits some release holds, test first (runs.js offers each release's own)
    present = {split for r in releases for split in r.counts.get("sets", {})}
    splits = [s for s in reversed(SPLITS) if s in present]
    context = {
        "project": project,
        "releases": releases,
        "specs": specs,
        "served": any(spec.kind == Served.name for spec in specs),
        "runs": runs[:100],
        "errors": errors,
        "splits": splits,
    }
    return render(request, "evaluation/runs.html", context, status=400 if errors else 200)


def _run(request: HttpRequest, slug: str, pk: int) -> tuple[Any, EvaluationRun]:
    project = admin_project(request.user, slug)
    run = get_object_or_404(
        EvaluationRun.objects.select_related("release", "model"), pk=pk, release__project=project
    )
    return project, run


@login_required
def run_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, run = _run(request, slug, pk)
    pairs = project.task_type == project.TaskType.MINIMAL_PAIR
    progress_url = reverse("run-progress", args=[slug, pk])
    context = {
        "project": project,
        "run": run,
        "failed_sets": [],
        "pairs": pairs,
        "progress_url": progress_url,
    }
    if run.status == EvaluationRun.Status.SUCCEEDED:
        failing = Paginator(results.failing_set_ids(run), results.FAILED_SETS_PER_PAGE)
        context["failed_page"] = page = failing.get_page(request.GET.get("failed"))
    if run.status == EvaluationRun.Status.SUCCEEDED and pairs:
        context["failed_pairs"] = results.failed_pairs(run, list(page))
    elif run.status == EvaluationRun.Status.SUCCEEDED:
        context["failed_sets"] = results.failed_sets(run, project, list(page))
        context["confusion"] = results.confusion_rows(run.metrics)
        if run.metrics.get("unparsed"):
            context["unparsed_answers"] = results.unparsed_answers(run)
    return render(request, "evaluation/run.html", context)


RUN_PAGES = JobPages(
    EvaluationRun, "release__project", "run", "examples", services.ACTIONS, admin_project
)


@login_required
def job_progress(request: HttpRequest, slug: str, pk: int, pages: JobPages) -> HttpResponse:
    """The progress bar of a run or an analysis; the page reloads once the job has finished."""
    project, job = pages.find(request, slug, pk)
    context = {"project": project, "run": job, "unit": pages.unit, "progress_url": request.path}
    response = render(request, "evaluation/_progress.html", context)
    if job.finished:
        response["HX-Refresh"] = "true"  # show the results
    return response


@login_required
def compare_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = admin_project(request.user, slug)
    runs = EvaluationRun.objects.filter(
        release__project=project, status=EvaluationRun.Status.SUCCEEDED
    ).select_related("release", "model")
    if "a" in request.GET or "b" in request.GET:
        chosen = [runs.filter(pk=parse_id(request.GET.get(k)) or 0).first() for k in ("a", "b")]
    else:  # two different runs by default: the newest two
        chosen = [*runs[:2], None, None][:2]
    pair = [run for run in chosen if run is not None]
    rows = results.comparison(pair) if len(pair) == 2 else []
    paired, refusal = {}, ""
    if rows:
        try:
            paired = compare.run_comparison(
                *compare.runs_to_compare(request.user, f"{pair[0].pk},{pair[1].pk}")
            )
        except DomainError as error:
            refusal = error.message
    picks = [(key, run.pk if run else None) for key, run in zip("ab", chosen, strict=True)]
    context = {
        "project": project,
        "runs": runs,
        "chosen": pair,
        "rows": rows,
        "table": results.paired_table(rows, paired),
        "paired": paired,
        "refusal": refusal,
        "unparsed": results.unparsed_notes(pair),
        "picks": picks,
        "chart": results.comparison_chart(pair, rows),
        "within_run": [
            (
                run,
                results.points(w["drop"], sign=False),
                results.interval_points(w["interval"], None),
                w["p_value"],
            )
            for run, w in zip("AB", paired.get("within_run", []), strict=False)
        ],
    }
    return render(request, "evaluation/compare.html", context)
