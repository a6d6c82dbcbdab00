"""Pages for experts: the pivot browser, the perturbation editor and My work."""

from itertools import zip_longest
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotation.authoring import selectors
from annotation.authoring.services import claims, drafts
from annotation.comments import selectors as comment_selectors
from annotation.errors import DomainError, flash_refusal
from annotation.models import Claim, Example, Perturbation, Project, Tag
from annotation.models.config import SPLITS
from annotation.permissions import Role, project_for
from annotation.projects.services import tag_create
from annotation.text.answers import answer_text, split_spans
from annotation.text.edits import LINE_BREAK, word_diff
from annotation.text.fields import FIELD_STYLES, FIELD_TAGS
from annotation.text.parsing import parse_id
from annotation.validation.services.votes import vote_counts

AUTHORS = (Role.EXPERT, Role.ADMIN)


@login_required
def pivot_browser(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, *AUTHORS)
    split = request.GET.get("split", "test")
    label = request.GET.get("label", "")
    filters: dict[str, Any] = {
        "split": split if split in SPLITS else "test",
        "label": label if label in project.labels else "",
        "unused": request.GET.get("unused") == "1",
        "search": request.GET.get("search", "").strip(),
    }
    page = Paginator(selectors.pivots(project, **filters), 25).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "project": project,
        "filters": filters,
        "page": page,
        "query": query.urlencode(),
        "splits": SPLITS,
        "limit": project.setting("max_perturbations_per_pivot"),
    }
    return render(request, "annotation/pivots.html", context)


@login_required
@require_POST
def pivot_claim(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_for(request.user, slug, *AUTHORS)
    pivot = get_object_or_404(Example, project=project, pk=pk)
    try:
        claims.pivot_claim(pivot=pivot, expert=request.user)
    except DomainError as error:
        flash_refusal(request, error)
        return redirect(request.META.get("HTTP_REFERER") or reverse("pivots", args=[slug]))
    draft = parse_id(request.POST.get("draft"))
    if draft is not None:
        return redirect("editor-draft", slug=slug, pk=draft)
    return redirect("editor-new", slug=slug, pk=pivot.pk)


@login_required
@require_POST
def pivot_answer(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The answer of an original that waits for one, written by the expert who holds it."""
    project = project_for(request.user, slug, *AUTHORS)
    pivot = get_object_or_404(Example, project=project, pk=pk)
    lines = [line for line in request.POST.get("answers", "").splitlines() if line.strip()]
    try:
        claims.pivot_answer_write(pivot=pivot, expert=request.user, answers=split_spans(lines))
        messages.success(request, "The original's answer is saved.")
    except DomainError as error:
        flash_refusal(request, error)
    return redirect("editor-new", slug=slug, pk=pivot.pk)


@login_required
@require_POST
def pivot_sample(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, *AUTHORS)
    split = request.POST.get("split", "test")
    split = split if split in SPLITS else "test"
    try:
        claim = claims.pivot_sample(
            project=project,
            expert=request.user,
            split=split,
            strategy=request.POST.get("strategy", "random"),
        )
    except DomainError as error:
        _said_submitted(request, "")
        flash_refusal(request, error)
        return redirect(f"{reverse('pivots', args=[slug])}?split={split}")
    _said_submitted(request, " Here is the next pivot.")
    written = claim.example.perturbations.exclude(status="withdrawn").count()
    if written:
        messages.info(
            request,
            f"Every pivot of the {split} split has a perturbation already: this one has "
            f"{written}; write another (up to {project.setting('max_perturbations_per_pivot')}"
            " per pivot).",
        )
    return redirect("editor-new", slug=slug, pk=claim.example_id)


def _said_submitted(request: HttpRequest, then: str) -> None:
    """ "Submit & next" brings the expert here: the submit is said, whatever comes next."""
    submitted = parse_id(request.POST.get("submitted"))
    if submitted is not None:
        messages.success(request, f"Perturbation {submitted} submitted.{then}")


@login_required
def editor_new(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_for(request.user, slug, *AUTHORS)
    pivot = get_object_or_404(Example, project=project, pk=pk)
    return _editor(request, project, pivot, None)


@login_required
def editor_draft(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_for(request.user, slug, *AUTHORS)
    perturbation = get_object_or_404(project.perturbations, pk=pk, author=request.user)
    if perturbation.status != Perturbation.Status.DRAFT:
        messages.info(request, "That perturbation is no longer a draft; its text is frozen.")
        return redirect("my-work", slug=slug)
    return _editor(request, project, perturbation.pivot, perturbation)


def _thread(request: HttpRequest, project: Any, draft: Perturbation | None) -> Any:
    """The draft's comments (a sent-back perturbation's reasons among them)."""
    if draft is None:
        return None
    draft.project = project
    return comment_selectors.thread_context(request.user, draft, request.get_full_path())


def _editor(
    request: HttpRequest, project: Any, pivot: Example, draft: Perturbation | None
) -> HttpResponse:
    # Opening the editor changes nothing: claiming is a POST (the pivot browser's button, or
    # the one this page shows when the claim is missing or expired).
    claim = Claim.objects.filter(example=pivot).first()
    live = claim is not None and claim.is_live()
    held_by_me = live and claim.expert_id == request.user.pk  # type: ignore[union-attr]
    fields = draft.fields if draft else pivot.fields
    config = {
        "pivot": pivot.external_id,
        "pivotFields": pivot.fields,
        "editable": project.editable_field_names,
        "draftId": draft.pk if draft else None,
        "secondsSoFar": draft.seconds_spent if draft else 0,
        "maxEditRatio": project.setting("max_edit_ratio"),
        "createUrl": reverse("api-perturbations", args=[project.slug]),
        "detailUrl": reverse("api-perturbation", args=[project.slug, 0]),
        "myWorkUrl": reverse("my-work", args=[project.slug]),
        "nextUrl": reverse("pivot-sample", args=[project.slug]),
        "draftEditUrl": reverse("editor-draft", args=[project.slug, 0]),
        "split": pivot.split,
        # The server's sanitiser's allow-list, for the preview of an html field's edit.
        "htmlTags": sorted(tag.upper() for tag in FIELD_TAGS),
        "htmlStyles": sorted(FIELD_STYLES),
        "lineBreak": LINE_BREAK,  # a text field's line break, shown as the pages show it
    }
    context = {
        "project": project,
        "pivot": pivot,
        "draft": draft,
        "held": held_by_me,
        "held_by_other": live and not held_by_me,
        "claim": claim,
        "field_rows": [
            {**spec, "pivot": pivot.fields[spec["name"]], "value": fields[spec["name"]]}
            for spec in project.fields
        ],
        "tags": _tags_with_keys(project),
        "chosen_tags": set(draft.tags.values_list("name", flat=True)) if draft else set(),
        "chosen_label": draft.label if draft else _flipped(project, pivot),
        "draft_answers": "\n".join(answer_text(a) for a in draft.answers) if draft else "",
        "config": config,
        "guidelines": project.current_guidelines(),
        "existing": _existing(project, pivot, draft),
        "limit": project.setting("max_perturbations_per_pivot"),
        "thread": _thread(request, project, draft),
    }
    return render(request, "annotation/editor.html", context)


def _existing(project: Project, pivot: Example, draft: Perturbation | None) -> list[dict[str, Any]]:
    """The pivot's other live perturbations, by anyone, as edits of it: what not to write
    twice."""
    others = selectors.live_perturbations(pivot).exclude(pk=draft.pk if draft else None)
    before = project.editable_text(pivot.fields)
    return [
        {"p": p, "diff": word_diff(before, project.editable_text(p.fields))}
        for p in others.select_related("author").prefetch_related("tags").order_by("id")
    ]


def _tags_with_keys(project: Project) -> list[tuple[Any, str | None]]:
    tags = list(project.tags.all())
    return list(zip_longest(tags, Tag.KEYS[: len(tags)]))


def _flipped(project: Project, pivot: Example) -> str:
    """With two labels and edits that must flip it, the intended label is the other one."""
    labels = project.labels
    if len(labels) == 2 and pivot.label in labels and project.setting("require_label_change"):
        return labels[1 - labels.index(pivot.label)]
    return ""


@login_required
def my_work(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, *AUTHORS)
    status = request.GET.get("status", "")
    user: Any = request.user
    qs = project.perturbations.filter(author=user).select_related("pivot")
    qs = qs.prefetch_related("tags")
    if status in Perturbation.Status.values:
        qs = qs.filter(status=status)
    page = Paginator(qs, 50).get_page(request.GET.get("page"))
    rows = [
        {
            "p": p,
            "diff": word_diff(
                project.editable_text(p.pivot.fields), project.editable_text(p.fields)
            ),
            "votes": vote_counts(p) if p.is_resolved else None,
        }
        for p in page
    ]
    counts: dict[str, int] = dict(
        project.perturbations.filter(author=user).values_list("status").annotate(n=Count("id"))
    )
    context = {
        "project": project,
        "rows": rows,
        "page": page,
        "status": status,
        "counts": counts,
        "statuses": Perturbation.Status.choices,
    }
    return render(request, "annotation/my_work.html", context)


@login_required
@require_POST
def perturbation_withdraw(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_for(request.user, slug, *AUTHORS)
    perturbation = get_object_or_404(project.perturbations, pk=pk, author=request.user)
    try:
        drafts.perturbation_withdraw(perturbation=perturbation, user=request.user)
    except DomainError as error:
        flash_refusal(request, error)
    else:
        messages.success(request, f"Perturbation {pk} withdrawn.")
    return redirect("my-work", slug=slug)


@login_required
@require_POST
def tag_add(request: HttpRequest, slug: str) -> HttpResponse:
    """An expert adds a tag of their own to the project's taxonomy (a project made from a
    published set has only its dataset's tag), then goes back to their edit."""
    project = project_for(request.user, slug, *AUTHORS)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("pivots", args=[slug])
    try:
        tag = tag_create(
            project=project,
            user=request.user,
            name=request.POST.get("name", ""),
            description=request.POST.get("description", ""),
        )
    except DomainError as error:
        flash_refusal(request, error)
    else:
        messages.success(request, f"Tag {tag.name!r} added; tick it for your edit.")
    return redirect(back)
