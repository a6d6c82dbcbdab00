from django.urls import path

from evaluation import api, views

api_urls = [
    path("models/", api.ModelListView.as_view(), name="api-models"),
    path("evaluations/", api.RunListView.as_view(), name="api-evaluations"),
    path("evaluations/<id:pk>/", api.RunDetailView.as_view(), name="api-evaluation"),
    path(
        "evaluations/<id:pk>/cancel/",
        api.RunActionView.as_view(action="cancel"),
        name="api-evaluation-cancel",
    ),
    path(
        "evaluations/<id:pk>/retry/",
        api.RunActionView.as_view(action="retry"),
        name="api-evaluation-retry",
    ),
    path("analyses/", api.AnalysisListView.as_view(), name="api-analyses"),
    path("analyses/<id:pk>/", api.AnalysisDetailView.as_view(), name="api-analysis"),
    path(
        "analyses/<id:pk>/cancel/",
        api.AnalysisActionView.as_view(action="cancel"),
        name="api-analysis-cancel",
    ),
    path(
        "analyses/<id:pk>/retry/",
        api.AnalysisActionView.as_view(action="retry"),
        name="api-analysis-retry",
    ),
]

page_urls = [
    path("p/<slug:slug>/models/", views.models_page, name="models"),
    path("p/<slug:slug>/evaluations/", views.runs_page, name="runs"),
    path("p/<slug:slug>/evaluations/compare/", views.compare_page, name="runs-compare"),
    path("p/<slug:slug>/evaluations/<id:pk>/", views.run_page, name="run"),
    path("p/<slug:slug>/evaluations/<id:pk>/progress/", views.run_progress, name="run-progress"),
    path("p/<slug:slug>/evaluations/<id:pk>/<str:action>/", views.run_action, name="run-action"),
    path("p/<slug:slug>/analyses/", views.analyses_page, name="analyses"),
    path("p/<slug:slug>/analyses/<id:pk>/", views.analysis_page, name="analysis"),
    path(
        "p/<slug:slug>/analyses/<id:pk>/progress/",
        views.analysis_progress,
        name="analysis-progress",
    ),
    path(
        "p/<slug:slug>/analyses/<id:pk>/<str:action>/",
        views.analysis_action,
        name="analysis-action",
    ),
]
