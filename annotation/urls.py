from django.urls import path

from annotation import (
    api,
    authoring_api,
    authoring_views,
    release_api,
    release_views,
    validation_api,
    validation_views,
    views,
)

api_urls = [
    path("projects/", api.ProjectListView.as_view(), name="api-projects"),
    path("projects/<slug:slug>/", api.ProjectDetailView.as_view(), name="api-project"),
    path("projects/<slug:slug>/members/", api.MemberView.as_view(), name="api-members"),
    path(
        "projects/<slug:slug>/examples/import/",
        api.ExampleImportView.as_view(),
        name="api-examples-import",
    ),
    path(
        "projects/<slug:slug>/examples/", authoring_api.PivotListView.as_view(), name="api-pivots"
    ),
    path(
        "projects/<slug:slug>/examples/sample/",
        authoring_api.SampleView.as_view(),
        name="api-pivot-sample",
    ),
    path(
        "projects/<slug:slug>/examples/<path:external_id>/claim/",
        authoring_api.ClaimView.as_view(),
        name="api-pivot-claim",
    ),
    path(
        "projects/<slug:slug>/perturbations/",
        authoring_api.PerturbationListView.as_view(),
        name="api-perturbations",
    ),
    path(
        "projects/<slug:slug>/perturbations/<int:pk>/",
        authoring_api.PerturbationDetailView.as_view(),
        name="api-perturbation",
    ),
    path(
        "projects/<slug:slug>/validation/next/",
        validation_api.NextItemView.as_view(),
        name="api-validation-next",
    ),
    path(
        "projects/<slug:slug>/validation/<int:item>/vote/",
        validation_api.VoteView.as_view(),
        name="api-vote",
    ),
    path("projects/<slug:slug>/stats/", validation_api.StatsView.as_view(), name="api-stats"),
    path(
        "projects/<slug:slug>/adjudicate/<int:pk>/",
        validation_api.AdjudicateView.as_view(),
        name="api-adjudicate",
    ),
    path(
        "projects/<slug:slug>/validators/",
        validation_api.ValidatorListView.as_view(),
        name="api-validators",
    ),
    path(
        "projects/<slug:slug>/validators/<str:username>/",
        validation_api.ValidatorQualifyView.as_view(),
        name="api-validator-qualify",
    ),
    path(
        "projects/<slug:slug>/import/votes/",
        validation_api.VoteImportView.as_view(),
        name="api-import-votes",
    ),
    path(
        "projects/<slug:slug>/import/sets/",
        release_api.SetImportView.as_view(),
        name="api-import-sets",
    ),
    path(
        "projects/<slug:slug>/releases/",
        release_api.ReleaseListView.as_view(),
        name="api-releases",
    ),
    path("releases/<int:pk>/", release_api.ReleaseDetailView.as_view(), name="api-release"),
    path(
        "releases/<int:pk>/download/",
        release_api.ReleaseDownloadView.as_view(),
        name="api-release-download",
    ),
    path("releases/<int:pk>/diff/", release_api.ReleaseDiffView.as_view(), name="api-release-diff"),
]

page_urls = [
    path("", views.project_list, name="project-list"),
    path("p/<slug:slug>/", views.project_dashboard, name="project-dashboard"),
    path("p/<slug:slug>/import/", views.import_page, name="project-import"),
    path("p/<slug:slug>/members/", views.members_page, name="project-members"),
    path("p/<slug:slug>/pivots/", authoring_views.pivot_browser, name="pivots"),
    path("p/<slug:slug>/pivots/sample/", authoring_views.pivot_sample, name="pivot-sample"),
    path("p/<slug:slug>/pivots/<int:pk>/claim/", authoring_views.pivot_claim, name="pivot-claim"),
    path("p/<slug:slug>/pivots/<int:pk>/edit/", authoring_views.editor_new, name="editor-new"),
    path(
        "p/<slug:slug>/perturbations/<int:pk>/edit/",
        authoring_views.editor_draft,
        name="editor-draft",
    ),
    path(
        "p/<slug:slug>/perturbations/<int:pk>/withdraw/",
        authoring_views.perturbation_withdraw,
        name="perturbation-withdraw",
    ),
    path("p/<slug:slug>/mine/", authoring_views.my_work, name="my-work"),
    path("p/<slug:slug>/validate/", validation_views.validate, name="validate"),
    path("p/<slug:slug>/validate/<int:item>/vote/", validation_views.vote, name="validate-vote"),
    path("p/<slug:slug>/validate/skip/<int:item>/", validation_views.skip, name="validate-skip"),
    path("p/<slug:slug>/validators/", validation_views.validators_page, name="validators"),
    path(
        "p/<slug:slug>/validators/<int:user_id>/qualify/",
        validation_views.validator_qualify,
        name="validator-qualify",
    ),
    path("p/<slug:slug>/disputes/", validation_views.disputes_page, name="disputes"),
    path("p/<slug:slug>/releases/", release_views.releases_page, name="releases"),
    path("p/<slug:slug>/releases/<int:pk>/", release_views.release_detail, name="release-detail"),
    path("p/<slug:slug>/import/sets/", release_views.set_import_page, name="set-import"),
    path("p/<slug:slug>/disputes/<int:pk>/", validation_views.adjudicate, name="adjudicate"),
]
