from django.urls import path

from annotation import api, views

api_urls = [
    path("projects/", api.ProjectListView.as_view(), name="api-projects"),
    path("projects/<slug:slug>/", api.ProjectDetailView.as_view(), name="api-project"),
    path("projects/<slug:slug>/members/", api.MemberView.as_view(), name="api-members"),
    path(
        "projects/<slug:slug>/examples/import/",
        api.ExampleImportView.as_view(),
        name="api-examples-import",
    ),
]

page_urls = [
    path("", views.project_list, name="project-list"),
    path("p/<slug:slug>/", views.project_dashboard, name="project-dashboard"),
    path("p/<slug:slug>/import/", views.import_page, name="project-import"),
    path("p/<slug:slug>/members/", views.members_page, name="project-members"),
]
