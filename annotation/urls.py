from django.urls import path

from annotation.authoring import api as authoring_api
from annotation.authoring import views as authoring_views
from annotation.comments import api as comment_api
from annotation.comments import views as comment_views
from annotation.crowd import api as crowd_api
from annotation.crowd import views as crowd_views
from annotation.data import api as data_api
from annotation.data import views as data_views
from annotation.imports import api as import_api
from annotation.imports import views as import_views
from annotation.imports.published import views as published_views
from annotation.jobs.pages import job_action
from annotation.notifications import api as notification_api
from annotation.notifications import views as notification_views
from annotation.projects import api as project_api
from annotation.projects import views as project_views
from annotation.releases import api as release_api
from annotation.releases import views as release_views
from annotation.validation import api as validation_api
from annotation.validation import views as validation_views
from annotation.webhooks import api as webhook_api
from annotation.webhooks import views as webhook_views

api_urls = [
    path(
        "notifications/", notification_api.NotificationListView.as_view(), name="api-notifications"
    ),
    path(
        "notifications/read/",
        notification_api.NotificationReadView.as_view(),
        name="api-notifications-read",
    ),
    path(
        "notifications/preferences/",
        notification_api.PreferenceView.as_view(),
        name="api-notification-preferences",
    ),
    path("projects/", project_api.ProjectListView.as_view(), name="api-projects"),
    path("projects/<slug:slug>/", project_api.ProjectDetailView.as_view(), name="api-project"),
    path("projects/<slug:slug>/members/", project_api.MemberView.as_view(), name="api-members"),
    path("projects/<slug:slug>/items/", data_api.ItemListView.as_view(), name="api-items"),
    path("projects/<slug:slug>/items/bulk/", data_api.BulkView.as_view(), name="api-items-bulk"),
    path("projects/<slug:slug>/items/<id:pk>/", data_api.ItemDetailView.as_view(), name="api-item"),
    path("projects/<slug:slug>/audit/", data_api.AuditView.as_view(), name="api-audit"),
    path(
        "projects/<slug:slug>/examples/import/",
        import_api.ExampleImportView.as_view(),
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
        "projects/<slug:slug>/perturbations/<id:pk>/",
        authoring_api.PerturbationDetailView.as_view(),
        name="api-perturbation",
    ),
    path(
        "projects/<slug:slug>/perturbations/<id:pk>/comments/",
        comment_api.CommentListView.as_view(),
        name="api-comments",
    ),
    path(
        "projects/<slug:slug>/perturbations/<id:pk>/comments/<id:comment_id>/",
        comment_api.CommentDetailView.as_view(),
        name="api-comment",
    ),
    path(
        "projects/<slug:slug>/validation/next/",
        validation_api.NextItemView.as_view(),
        name="api-validation-next",
    ),
    path(
        "projects/<slug:slug>/validation/<id:item>/vote/",
        validation_api.VoteView.as_view(),
        name="api-vote",
    ),
    path("projects/<slug:slug>/stats/", validation_api.StatsView.as_view(), name="api-stats"),
    path("projects/<slug:slug>/studies/", crowd_api.StudyListView.as_view(), name="api-studies"),
    path(
        "projects/<slug:slug>/studies/<id:pk>/payments/",
        crowd_api.PaymentsView.as_view(),
        name="api-study-payments",
    ),
    path(
        "projects/<slug:slug>/adjudicate/<id:pk>/",
        validation_api.AdjudicateView.as_view(),
        name="api-adjudicate",
    ),
    path(
        "projects/<slug:slug>/validators/",
        validation_api.ValidatorListView.as_view(),
        name="api-validators",
    ),
    path(
        "projects/<slug:slug>/votes/",
        validation_api.VoteDownloadView.as_view(),
        name="api-votes",
    ),
    path(
        "projects/<slug:slug>/validators/<str:username>/",
        validation_api.ValidatorQualifyView.as_view(),
        name="api-validator-qualify",
    ),
    path(
        "projects/<slug:slug>/import/votes/",
        import_api.VoteImportView.as_view(),
        name="api-import-votes",
    ),
    path(
        "projects/<slug:slug>/import/published/",
        import_api.PublishedImportView.as_view(),
        name="api-import-published",
    ),
    path(
        "projects/<slug:slug>/import/sets/",
        import_api.SetImportView.as_view(),
        name="api-import-sets",
    ),
    path(
        "projects/<slug:slug>/imports/<id:pk>/",
        import_api.ImportJobView.as_view(),
        name="api-import-job",
    ),
    path(
        "projects/<slug:slug>/batches/<id:pk>/",
        data_api.BatchView.as_view(),
        name="api-batch",
    ),
    path(
        "import/published/",
        import_api.NewProjectPublishedImportView.as_view(),
        name="api-import-published-new",
    ),
    path(
        "projects/<slug:slug>/imports/<id:pk>/<str:action>/",
        import_api.ImportJobActionView.as_view(),
        name="api-import-job-action",
    ),
    path(
        "projects/<slug:slug>/releases/",
        release_api.ReleaseListView.as_view(),
        name="api-releases",
    ),
    path("releases/<id:pk>/", release_api.ReleaseDetailView.as_view(), name="api-release"),
    path(
        "releases/<id:pk>/download/",
        release_api.ReleaseDownloadView.as_view(),
        name="api-release-download",
    ),
    path("releases/<id:pk>/diff/", release_api.ReleaseDiffView.as_view(), name="api-release-diff"),
    path(
        "projects/<slug:slug>/webhooks/", webhook_api.WebhookListView.as_view(), name="api-webhooks"
    ),
    path(
        "projects/<slug:slug>/webhooks/<id:pk>/",
        webhook_api.WebhookDetailView.as_view(),
        name="api-webhook",
    ),
    path(
        "projects/<slug:slug>/webhooks/<id:pk>/test/",
        webhook_api.WebhookTestView.as_view(),
        name="api-webhook-test",
    ),
    path(
        "projects/<slug:slug>/webhooks/<id:pk>/deliveries/",
        webhook_api.DeliveryListView.as_view(),
        name="api-webhook-deliveries",
    ),
]

page_urls = [
    path("", project_views.project_list, name="project-list"),
    path("start/", project_views.project_start, name="project-start"),
    path("notifications/", notification_views.inbox_page, name="notifications"),
    path("notifications/read/", notification_views.mark_read, name="notifications-read"),
    path(
        "notifications/preferences/",
        notification_views.preferences,
        name="notifications-preferences",
    ),
    path("projects/new/", project_views.project_new, name="project-new"),
    path(
        "projects/new/published/",
        published_views.published_import_page,
        name="project-new-published",
    ),
    path("p/<slug:slug>/", project_views.project_dashboard, name="project-dashboard"),
    path("p/<slug:slug>/settings/", project_views.project_settings, name="project-settings"),
    path(
        "p/<slug:slug>/settings/questions/",
        project_views.project_questions,
        name="project-questions",
    ),
    path("p/<slug:slug>/studies/gates/", project_views.project_gates, name="project-gates"),
    path("p/<slug:slug>/settings/webhooks/", webhook_views.webhooks_page, name="webhooks"),
    path(
        "p/<slug:slug>/settings/webhooks/<id:pk>/delete/",
        webhook_views.webhook_delete,
        name="webhook-delete",
    ),
    path(
        "p/<slug:slug>/settings/webhooks/<id:pk>/test/",
        webhook_views.webhook_test,
        name="webhook-test",
    ),
    path("p/<slug:slug>/import/", import_views.import_page, name="project-import"),
    path("p/<slug:slug>/import/votes/", import_views.vote_import_page, name="vote-import"),
    path(
        "p/<slug:slug>/import/batches/<id:pk>/warnings/",
        import_views.import_warnings,
        name="import-warnings",
    ),
    path(
        "p/<slug:slug>/import/batches/<id:pk>/skipped/",
        import_views.skipped_lines,
        name="import-skipped",
    ),
    path("p/<slug:slug>/members/", project_views.members_page, name="project-members"),
    path("p/<slug:slug>/join/<str:token>/", project_views.join_page, name="project-join"),
    path("p/<slug:slug>/data/", data_views.data_page, name="data"),
    path("p/<slug:slug>/data/bulk/", data_views.bulk_action, name="data-bulk"),
    path("p/<slug:slug>/data/<str:kind>/<id:pk>/", data_views.item_page, name="data-item"),
    path("p/<slug:slug>/audit/", data_views.audit_page, name="audit"),
    path("p/<slug:slug>/delete/", data_views.project_delete, name="project-delete"),
    path("p/<slug:slug>/import/batches/<id:pk>/undo/", data_views.batch_undo, name="batch-undo"),
    path("p/<slug:slug>/pivots/", authoring_views.pivot_browser, name="pivots"),
    path("p/<slug:slug>/pivots/sample/", authoring_views.pivot_sample, name="pivot-sample"),
    path("p/<slug:slug>/pivots/<id:pk>/claim/", authoring_views.pivot_claim, name="pivot-claim"),
    path("p/<slug:slug>/pivots/<id:pk>/answer/", authoring_views.pivot_answer, name="pivot-answer"),
    path("p/<slug:slug>/pivots/<id:pk>/edit/", authoring_views.editor_new, name="editor-new"),
    path("p/<slug:slug>/tags/add/", authoring_views.tag_add, name="tag-add"),
    path(
        "p/<slug:slug>/perturbations/<id:pk>/edit/",
        authoring_views.editor_draft,
        name="editor-draft",
    ),
    path(
        "p/<slug:slug>/perturbations/<id:pk>/withdraw/",
        authoring_views.perturbation_withdraw,
        name="perturbation-withdraw",
    ),
    path(
        "p/<slug:slug>/perturbations/<id:pk>/comments/",
        comment_views.comment_post,
        name="comment-post",
    ),
    path(
        "p/<slug:slug>/perturbations/<id:pk>/thread/",
        comment_views.thread_page,
        name="comment-thread",
    ),
    path(
        "p/<slug:slug>/perturbations/<id:pk>/comments/<id:comment_id>/edit/",
        comment_views.comment_edit,
        name="comment-edit",
    ),
    path(
        "p/<slug:slug>/perturbations/<id:pk>/comments/<id:comment_id>/delete/",
        comment_views.comment_delete,
        name="comment-delete",
    ),
    path("p/<slug:slug>/mine/", authoring_views.my_work, name="my-work"),
    path("p/<slug:slug>/validate/", validation_views.validate, name="validate"),
    path("p/<slug:slug>/validate/<id:item>/vote/", validation_views.vote, name="validate-vote"),
    path("p/<slug:slug>/validate/skip/<id:item>/", validation_views.skip, name="validate-skip"),
    path("p/<slug:slug>/validate/unskip/", validation_views.unskip, name="validate-unskip"),
    path("p/<slug:slug>/validate/<id:item>/undo/", validation_views.undo, name="validate-undo"),
    path("p/<slug:slug>/validators/", validation_views.validators_page, name="validators"),
    path(
        "p/<slug:slug>/validators/<id:user_id>/qualify/",
        validation_views.validator_qualify,
        name="validator-qualify",
    ),
    path("p/<slug:slug>/disputes/", validation_views.disputes_page, name="disputes"),
    path("p/<slug:slug>/studies/", crowd_views.studies_page, name="studies"),
    path("p/<slug:slug>/studies/guide/", crowd_views.studies_guide, name="studies-guide"),
    path(
        "p/<slug:slug>/studies/<id:pk>/payments/",
        crowd_views.study_payments,
        name="study-payments",
    ),
    path("p/<slug:slug>/study/<str:token>/", crowd_views.study_enter, name="study-enter"),
    path("p/<slug:slug>/study/<str:token>/done/", crowd_views.study_done, name="study-done"),
    path("p/<slug:slug>/study/<str:token>/leave/", crowd_views.study_leave, name="study-leave"),
    path("p/<slug:slug>/releases/", release_views.releases_page, name="releases"),
    path("p/<slug:slug>/releases/<id:pk>/", release_views.release_detail, name="release-detail"),
    path("p/<slug:slug>/import/sets/", import_views.set_import_page, name="set-import"),
    path(
        "p/<slug:slug>/import/published/",
        published_views.published_import_page,
        name="published-import",
    ),
    path("p/<slug:slug>/imports/<id:pk>/", import_views.import_job_page, name="import-job"),
    path(
        "p/<slug:slug>/imports/<id:pk>/<str:action>/",
        job_action,
        {"pages": import_views.IMPORT_PAGES},
        name="import-job-action",
    ),
    path("p/<slug:slug>/disputes/<id:pk>/", validation_views.adjudicate, name="adjudicate"),
]
