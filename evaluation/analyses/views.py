"""Pages of analyses: ask for one, follow it, read its result. Admins only; everyone else
gets 404."""

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotation.errors import DomainError
from annotation.jobs.pages import JobPages
from annotation.models import Release
from evaluation.access import admin_project
from evaluation.analyses import services
from evaluation.models import Analysis, EvaluationRun, ModelSpec


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
        return {
            "release": release,
            "model": data["model"].pk if data["model"] else None,
            "pool_split": data["pool_split"] or "dev",
            "sizes": sizes,
            "learning_rates": rates,
            "max_epochs": data["max_epochs"] or 10,
            "seed": data["seed"] or 0,
            "delta": 2.0 if data["delta"] is None else data["delta"],
        }


@login_required
def analyses_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = admin_project(request.user, slug)
    form = AnalysisForm(project, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            analysis = services.analysis_create(
                project=project,
                user=request.user,
                kind=form.cleaned_data["kind"],
                params=form.params(),
            )
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            return redirect("analysis", slug=slug, pk=analysis.pk)
    analyses = Analysis.objects.filter(project=project)[:100]
    context = {"project": project, "form": form, "analyses": analyses}
    return render(request, "evaluation/analyses.html", context)


ANALYSIS_PAGES = JobPages(Analysis, "project", "analysis", "steps", services.ACTIONS, admin_project)


def _analysis(request: HttpRequest, slug: str, pk: int) -> tuple[Any, Analysis]:
    project = admin_project(request.user, slug)
    return project, get_object_or_404(Analysis, project=project, pk=pk)


@login_required
def analysis_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, analysis = _analysis(request, slug, pk)
    params = "; ".join(
        f"{key.replace('_', ' ')}: {', '.join(map(str, v)) if isinstance(v, list) else v}"
        for key, v in analysis.params.items()
    )
    context = {
        "project": project,
        "analysis": analysis,
        "run": analysis,
        "unit": "steps",
        "progress_url": reverse("analysis-progress", args=[slug, pk]),
        "params": params,
    }
    return render(request, "evaluation/analysis.html", context)
