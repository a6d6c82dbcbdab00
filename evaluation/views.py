"""Pages for model specs and evaluation runs. Admins only; everyone else gets 404."""

from collections import defaultdict
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.authoring.edits import word_diff
from annotation.errors import DomainError, flash_refusal
from annotation.formfields import JSONObjectField
from annotation.models import Release
from annotation.releases.bundle import read_examples
from config.edge import parse_id
from evaluation import analysis_services, services
from evaluation.access import admin_project
from evaluation.minimal_pairs import ACCEPTABLE, UNACCEPTABLE
from evaluation.models import Analysis, EvaluationRun, ModelSpec

FAILED_SETS_SHOWN = 50


class ModelForm(forms.Form):
    name = forms.CharField(max_length=100)
    kind = forms.ChoiceField(
        choices=ModelSpec.Kind.choices,
        help_text="classifiers and python for classification; language models for minimal "
        "pairs; question answering and python for free text",
    )
    source = forms.CharField(
        max_length=500,
        help_text="a hub id (org/name); staff: a folder in MODELS_DIR or package.module:callable",
    )
    label_mapping = JSONObjectField(
        empty_value={}, help_text='model label to project label, e.g. {"LABEL_0": "negative"}'
    )
    max_length = forms.IntegerField(initial=256, min_value=1, max_value=8192)
    batch_size = forms.IntegerField(initial=32, min_value=1, max_value=4096)
    device = forms.ChoiceField(choices=ModelSpec.Device.choices)
    precision = forms.ChoiceField(choices=ModelSpec.Precision.choices, help_text="bf16/fp16: CUDA")
    prompt = forms.CharField(
        max_length=500, initial="{source}\n", strip=False, required=False,
        help_text="language models: the unscored text before a variant, with {source}",
    )  # fmt: skip
    num_beams = forms.IntegerField(
        initial=1, min_value=1, max_value=16, help_text="beams for a language model's own output"
    )
    max_new_tokens = forms.IntegerField(initial=64, min_value=1, max_value=1024)
    stride = forms.IntegerField(
        initial=128, min_value=1, max_value=4096, help_text="QA: token overlap of context windows"
    )
    max_answer_tokens = forms.IntegerField(
        initial=30, min_value=1, max_value=1024, help_text="QA: the longest answer span"
    )


@login_required
def models_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = admin_project(request.user, slug)
    form = ModelForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.model_register(project=project, user=request.user, **form.cleaned_data)
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"Model {form.cleaned_data['name']} registered.")
            return redirect("models", slug=slug)
    context = {"project": project, "form": form, "specs": ModelSpec.objects.filter(project=project)}
    return render(request, "evaluation/models.html", context)


@login_required
def runs_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = admin_project(request.user, slug)
    releases = project.releases.all()
    specs = ModelSpec.objects.filter(project=project)
    if request.method == "POST":
        release = releases.filter(pk=parse_id(request.POST.get("release")) or 0).first()
        model = specs.filter(pk=parse_id(request.POST.get("model")) or 0).first()
        try:
            if release is None or model is None:
                raise DomainError("Choose a release and a model of this project.")
            run = services.evaluation_enqueue(
                release=release, model=model, split=request.POST.get("split", "test"),
                user=request.user,
            )  # fmt: skip
        except DomainError as error:
            flash_refusal(request, error)
        else:
            return redirect("run", slug=slug, pk=run.pk)
    runs = EvaluationRun.objects.filter(release__project=project).select_related("release", "model")
    context = {"project": project, "releases": releases, "specs": specs, "runs": runs[:100]}
    return render(request, "evaluation/runs.html", context)


def _run(request: HttpRequest, slug: str, pk: int) -> tuple[Any, EvaluationRun]:
    project = admin_project(request.user, slug)
    run = get_object_or_404(
        EvaluationRun.objects.select_related("release", "model"), pk=pk, release__project=project
    )
    return project, run


@login_required
def run_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, run = _run(request, slug, pk)
    pairs = run.model.kind in ModelSpec.LANGUAGE_MODELS
    progress_url = reverse("run-progress", args=[slug, pk])
    context = {"project": project, "run": run, "failed_sets": [], "pairs": pairs,
               "progress_url": progress_url}  # fmt: skip
    if run.status == EvaluationRun.Status.SUCCEEDED and pairs:
        context["failed_pairs"] = failed_pairs(run)
    elif run.status == EvaluationRun.Status.SUCCEEDED:
        context["failed_sets"] = failed_sets(run, project)
        context["confusion"] = confusion_rows(run.metrics)
    return render(request, "evaluation/run.html", context)


@login_required
def run_progress(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, run = _run(request, slug, pk)
    context = {"project": project, "run": run, "progress_url": request.path}
    response = render(request, "evaluation/_progress.html", context)
    if run.finished:
        response["HX-Refresh"] = "true"  # show the results
    return response


@login_required
@require_POST
def run_action(request: HttpRequest, slug: str, pk: int, action: str) -> HttpResponse:
    _, run = _run(request, slug, pk)
    actions = {"cancel": services.evaluation_cancel, "retry": services.evaluation_retry}
    return _job_action(request, actions.get(action), lambda: actions[action](run=run), "run")


def _job_action(request: HttpRequest, known: Any, act: Any, page: str) -> HttpResponse:
    """Cancel or retry a run or an analysis, then show its page again."""
    if known is None:
        return HttpResponse(status=404)
    try:
        act()
    except DomainError as error:
        flash_refusal(request, error)
    kwargs = request.resolver_match.kwargs  # type: ignore[union-attr]
    return redirect(page, slug=kwargs["slug"], pk=kwargs["pk"])


# The figures two runs are compared on, by their names on the page
COMPARED = {
    "original_accuracy": "Accuracy on originals",
    "perturbed_accuracy": "Accuracy on perturbations",
    "drop": "Drop (originals - perturbations)",
    "consistency": "Consistency",
    "macro_f1": "Macro F1",
    "original_em": "Exact match on originals",
    "original_f1": "F1 on originals",
    "perturbed_em": "Exact match on perturbations",
    "perturbed_f1": "F1 on perturbations",
    "pair_accuracy": "Pair accuracy",
    "ties": "Ties",
    "discrepancy": "Discrepancy",
}


def tag_score(metrics: dict[str, Any], tag: str) -> float | None:
    """A tag's accuracy (labels), or its F1 (free text)."""
    row = metrics["per_tag"].get(tag, {})
    return row.get("accuracy", row.get("f1"))


def comparison(pair: list[EvaluationRun]) -> list[tuple[str, list[float | None]]]:
    """(figure name, each run's value) for the figures either run has, then per tag."""
    shown = {key: name for key, name in COMPARED.items() if any(key in r.metrics for r in pair)}
    rows = [(name, [run.metrics.get(key) for run in pair]) for key, name in shown.items()]
    tags = sorted({tag for run in pair for tag in run.metrics.get("per_tag", {})})
    return rows + [(f"Tag {tag}", [tag_score(run.metrics, tag) for run in pair]) for tag in tags]


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
    rows = comparison(pair) if len(pair) == 2 else []
    picks = [(key, run.pk if run else None) for key, run in zip("ab", chosen, strict=True)]
    chart = {
        "figures": [name for name, _ in rows],
        "runs": [{"name": f"#{run.pk} {run.model.name}", "values": [v[i] for _, v in rows]}
                 for i, run in enumerate(pair)],
    }  # fmt: skip
    context = {"project": project, "runs": runs, "chosen": pair, "rows": rows, "picks": picks,
               "chart": chart}  # fmt: skip
    return render(request, "evaluation/compare.html", context)


def confusion_rows(metrics: dict[str, Any]) -> list[tuple[str, list[tuple[int, float]]]]:
    confusion = metrics.get("confusion") or {}
    rows = []
    for label, counts in zip(confusion.get("labels", []), confusion.get("matrix", []), strict=True):
        total = sum(counts) or 1
        rows.append((label, [(n, n / total) for n in counts]))
    return rows


def failed_pairs(run: EvaluationRun) -> list[dict[str, Any]]:
    """The pairs the model got wrong: both variants as a diff, their scores, and the model's
    own output for the set's source."""
    examples = {e["id"]: e for e in read_examples(run.release, run.split)}
    by_set = defaultdict(list)
    for p in run.predictions.all().order_by("id"):
        by_set[p.set_id].append(p)
    out = []
    for set_id, members in by_set.items():
        original = next(p for p in members if p.role == "original")
        good = [p for p in members if p.gold == ACCEPTABLE]
        for bad in (p for p in members if p.gold == UNACCEPTABLE):
            for right in good:
                if right.score is not None and bad.score is not None and right.score > bad.score:
                    continue
                text = examples[right.example]["fields"]["text"]
                out.append({
                    "set_id": set_id, "tags": examples[bad.example]["tags"],
                    "diff": word_diff(text, examples[bad.example]["fields"]["text"]),
                    "correct": right.score, "contrastive": bad.score,
                    "output": original.output, "output_score": original.output_score,
                })  # fmt: skip
            if len(out) >= FAILED_SETS_SHOWN:
                return out
    return out


def failed_sets(run: EvaluationRun, project: Any) -> list[dict[str, Any]]:
    """The sets the model was not consistent on, with each member's diff and prediction."""
    predictions = defaultdict(list)
    for p in run.predictions.all().order_by("id"):
        predictions[p.set_id].append(p)
    failing = [s for s, members in predictions.items() if any(not p.correct for p in members)]
    examples = {e["id"]: e for e in read_examples(run.release, run.split)}
    names = project.editable_field_names
    out = []
    for set_id in failing[:FAILED_SETS_SHOWN]:
        members = predictions[set_id]
        original = next(p for p in members if p.role == "original")
        base = " ".join(examples[original.example]["fields"][n] for n in names)
        rows = []
        for p in members:
            text = " ".join(examples[p.example]["fields"][n] for n in names)
            diff = [("equal", text)] if p.role == "original" else word_diff(base, text)
            rows.append({"p": p, "diff": diff, "tags": examples[p.example]["tags"]})
        out.append({"set_id": set_id, "rows": rows})
    return out


class AnalysisForm(forms.Form):
    kind = forms.ChoiceField(choices=Analysis.Kind.choices)
    runs = forms.ModelMultipleChoiceField(
        queryset=EvaluationRun.objects.none(), required=False, help_text="instability: 2 or more"
    )
    release = forms.ModelChoiceField(queryset=Release.objects.none(), required=False)
    split = forms.ChoiceField(choices=[(s, s) for s in ("test", "dev", "train")], required=False)
    model = forms.ModelChoiceField(queryset=ModelSpec.objects.none(), required=False)
    pool_split = forms.ChoiceField(choices=[(s, s) for s in ("dev", "train")], required=False)
    sizes = forms.CharField(initial="0 50 100", required=False, help_text="sets, e.g. 0 50 100")
    learning_rates = forms.CharField(initial="1e-5 3e-5", required=False)
    max_epochs = forms.IntegerField(initial=10, min_value=1, max_value=100, required=False)
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**32 - 1, required=False)
    delta = forms.FloatField(initial=2.0, min_value=0, max_value=100, required=False)

    def __init__(self, project: Any, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        succeeded = EvaluationRun.objects.filter(
            release__project=project, status=EvaluationRun.Status.SUCCEEDED
        )
        self.fields["runs"].queryset = succeeded  # type: ignore[attr-defined]
        self.fields["release"].queryset = project.releases.all()  # type: ignore[attr-defined]
        self.fields["model"].queryset = ModelSpec.objects.filter(project=project)  # type: ignore[attr-defined]

    def params(self) -> dict[str, Any]:
        """What the analysis of this kind needs, as the API takes it."""
        data, kind = self.cleaned_data, self.cleaned_data["kind"]
        if kind == Analysis.Kind.INSTABILITY:
            return {"runs": [run.pk for run in data["runs"]]}
        release = data["release"].pk if data["release"] else None
        if kind == Analysis.Kind.ARTIFACTS:
            return {"release": release, "split": data["split"] or "test"}
        try:
            sizes = [int(s) for s in data["sizes"].split()]
            rates = [float(r) for r in data["learning_rates"].split()]
        except ValueError:
            raise DomainError("sizes are whole numbers and learning rates numbers.") from None
        return {"release": release, "model": data["model"].pk if data["model"] else None,
                "pool_split": data["pool_split"] or "dev", "sizes": sizes,
                "learning_rates": rates, "max_epochs": data["max_epochs"] or 10,
                "seed": data["seed"] or 0,
                "delta": 2.0 if data["delta"] is None else data["delta"]}  # fmt: skip


@login_required
def analyses_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = admin_project(request.user, slug)
    form = AnalysisForm(project, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            analysis = analysis_services.analysis_create(
                project=project, user=request.user, kind=form.cleaned_data["kind"],
                params=form.params(),
            )  # fmt: skip
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            return redirect("analysis", slug=slug, pk=analysis.pk)
    analyses = Analysis.objects.filter(project=project)[:100]
    context = {"project": project, "form": form, "analyses": analyses}
    return render(request, "evaluation/analyses.html", context)


def _analysis(request: HttpRequest, slug: str, pk: int) -> tuple[Any, Analysis]:
    project = admin_project(request.user, slug)
    return project, get_object_or_404(Analysis, project=project, pk=pk)


@login_required
def analysis_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, analysis = _analysis(request, slug, pk)
    context = {
        "project": project, "analysis": analysis, "run": analysis, "unit": "steps",
        "progress_url": reverse("analysis-progress", args=[slug, pk]),
    }  # fmt: skip
    return render(request, "evaluation/analysis.html", context)


@login_required
def analysis_progress(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, analysis = _analysis(request, slug, pk)
    context = {"project": project, "run": analysis, "unit": "steps", "progress_url": request.path}
    response = render(request, "evaluation/_progress.html", context)
    if analysis.finished:
        response["HX-Refresh"] = "true"
    return response


@login_required
@require_POST
def analysis_action(request: HttpRequest, slug: str, pk: int, action: str) -> HttpResponse:
    _, analysis = _analysis(request, slug, pk)
    actions = {"cancel": analysis_services.analysis_cancel,
               "retry": analysis_services.analysis_retry}  # fmt: skip
    return _job_action(
        request, actions.get(action), lambda: actions[action](analysis=analysis), "analysis"
    )
