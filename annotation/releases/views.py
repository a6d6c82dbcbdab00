"""Release pages: publishing, and one release with its card and its diff against another."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation.errors import DomainError
from annotation.permissions import Role, project_for
from annotation.releases.card import dataset_card
from annotation.releases.diff import release_diff
from annotation.releases.forms import ReleaseForm
from annotation.releases.power import release_power
from annotation.releases.services import release_create
from annotation.text.parsing import parse_id


@login_required
def releases_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    form = ReleaseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            release = release_create(project=project, user=request.user, **form.cleaned_data)
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"Release {release.version} published.")
            return redirect("release-detail", slug=slug, pk=release.pk)
    releases = project.releases.select_related("created_by")
    context = {"project": project, "form": form, "releases": releases}
    return render(request, "annotation/releases.html", context)


@login_required
def release_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    release = get_object_or_404(project.releases, pk=pk)
    others = project.releases.exclude(pk=pk)
    diff = None
    if request.GET.get("against"):
        other = get_object_or_404(others, pk=parse_id(request.GET["against"]))
        diff = release_diff(other, release)
    # The card's YAML header (the Hub's configs) is shown as it is, the rest as Markdown.
    header, _, card = dataset_card(project, release).removeprefix("---\n").partition("\n---\n")
    context = {
        "project": project,
        "release": release,
        "card_header": header,
        "card": card,
        "others": others,
        "diff": diff,
        "splits": sorted(release.counts.get("sets", {})),
        "power": release_power(release.counts),
    }
    return render(request, "annotation/release_detail.html", context)
