from django.urls import URLPattern, path

from annotation.jobs.pages import JobPages, job_action
from evaluation.analyses import api as analyses_api
from evaluation.analyses import views as analyses_views
from evaluation.runs import api as runs_api
from evaluation.runs import views as runs_views
from evaluation.specs import api as specs_api
from evaluation.specs import views as specs_views
from evaluation.table import api as table_api
from evaluation.table import views as table_views

api_urls = [
    path("models/", specs_api.ModelListView.as_view(), name="api-models"),
    path("models/<id:pk>/check/", specs_api.ModelCheckView.as_view(), name="api-model-check"),
    path("evaluations/", runs_api.RunListView.as_view(), name="api-evaluations"),
    path("evaluations/compare/", runs_api.RunCompareView.as_view(), name="api-evaluations-compare"),
    path("evaluations/<id:pk>/", runs_api.RunDetailView.as_view(), name="api-evaluation"),
    path(
        "evaluations/<id:pk>/predictions/",
        runs_api.RunPredictionsView.as_view(),
        name="api-evaluation-predictions",
    ),
    path("results/", table_api.ResultsView.as_view(), name="api-results"),
    path("results/score/", table_api.ResultsScoreView.as_view(), name="api-results-score"),
    path("analyses/", analyses_api.AnalysisListView.as_view(), name="api-analyses"),
    path("analyses/<id:pk>/", analyses_api.AnalysisDetailView.as_view(), name="api-analysis"),
]
for action in ("cancel", "retry"):
    api_urls += [
        path(
            f"evaluations/<id:pk>/{action}/",
            runs_api.RunActionView.as_view(action=action),
            name=f"api-evaluation-{action}",
        ),
        path(
            f"analyses/<id:pk>/{action}/",
            analyses_api.AnalysisActionView.as_view(action=action),
            name=f"api-analysis-{action}",
        ),
    ]


def job_page_urls(prefix: str, name: str, pages: JobPages) -> list[URLPattern]:
    """Under a job's page: its progress bar, and its cancel and retry (the one page action)."""
    return [
        path(
            f"p/<slug:slug>/{prefix}/<id:pk>/progress/",
            runs_views.job_progress,
            {"pages": pages},
            name=f"{name}-progress",
        ),
        path(
            f"p/<slug:slug>/{prefix}/<id:pk>/<str:action>/",
            job_action,
            {"pages": pages},
            name=f"{name}-action",
        ),
    ]


page_urls = [
    path("results/", table_views.results_page, name="results"),
    path("results/score/", table_views.results_score, name="results-score"),
    path("p/<slug:slug>/models/", specs_views.models_page, name="models"),
    path("p/<slug:slug>/models/<id:pk>/check/", specs_views.model_check_page, name="model-check"),
    path("p/<slug:slug>/models/prompt/", specs_views.prompt_page, name="prompt"),
    path("p/<slug:slug>/evaluations/", runs_views.runs_page, name="runs"),
    path("p/<slug:slug>/evaluations/compare/", runs_views.compare_page, name="runs-compare"),
    path("p/<slug:slug>/evaluations/<id:pk>/", runs_views.run_page, name="run"),
    *job_page_urls("evaluations", "run", runs_views.RUN_PAGES),
    path("p/<slug:slug>/analyses/", analyses_views.analyses_page, name="analyses"),
    path("p/<slug:slug>/analyses/<id:pk>/", analyses_views.analysis_page, name="analysis"),
    *job_page_urls("analyses", "analysis", analyses_views.ANALYSIS_PAGES),
]
