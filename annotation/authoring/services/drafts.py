"""Drafts and submission of perturbations (docs/workflows.md).

Every rule is enforced here, so that the API and the pages reject the same things with the
same messages.
"""

from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.authoring.rules import edit_problems
from annotation.authoring.selectors import live_perturbations
from annotation.authoring.services.claims import pivot_claim
from annotation.errors import DomainError
from annotation.models import (
    AuditLog,
    Claim,
    Example,
    Perturbation,
    PerturbationRevision,
    Project,
    Vote,
)
from annotation.models.config import clean_seconds_spent
from annotation.text.answers import AnswerRules, clean_answers
from annotation.text.edits import fields_edit_distance, normalize_whitespace
from annotation.validation.services.queue import item_close_for, items_open_for

Status = Perturbation.Status


def _check_fields(project: Project, pivot: Example, fields: Any) -> dict[str, str]:
    if not isinstance(fields, dict):
        raise DomainError("fields must be an object of field name to text.", field="fields")
    unknown = sorted(set(fields) - set(project.field_names))
    if unknown:
        raise DomainError(f"Unknown field {unknown[0]!r}.", field="fields")
    merged = {**pivot.fields, **fields}
    for name in project.field_names:
        value = merged.get(name)
        if not isinstance(value, str):
            raise DomainError(f"Field {name!r} must be text.", field=name)
        if len(value) > settings.IMPORT_MAX_FIELD_CHARS:
            raise DomainError(
                f"Field {name!r} is longer than {settings.IMPORT_MAX_FIELD_CHARS:,} characters.",
                field=name,
            )
        if name not in project.editable_field_names and value != pivot.fields.get(name):
            raise DomainError(
                f"Field {name!r} is read-only and must stay as in the pivot.", field=name
            )
    return {name: merged[name] for name in project.field_names}


def _check_claim(pivot: Example, author: Any) -> Claim | None:
    claim = Claim.objects.filter(example=pivot).first()
    if claim and claim.expert_id != author.pk and claim.is_live():
        raise DomainError(
            "Your claim on this pivot expired and another expert now holds it.",
            code="conflict",
        )
    return claim


def _check_submission(p: Perturbation, tag_names: list[str]) -> None:
    project, pivot = p.project, p.pivot
    if project.is_free_text and not p.answers:
        raise DomainError("Write the answer(s) to the edited question.", field="answers")
    if not project.is_free_text and p.label not in project.labels:
        known = ", ".join(project.labels)
        raise DomainError(
            f"Unknown label {p.label!r}; choose one of {known}."
            if p.label
            else "Choose the intended label.",
            field="label",
        )
    problems = edit_problems(
        project, pivot, p.fields, p.label, p.answers, allow_large_edit=p.allow_large_edit
    )
    if problems:
        first = problems[0]
        message = first.message[0].upper() + first.message[1:]
        if first.admin_may_allow:
            message += " Make a smaller edit, or ask an admin to allow this one."
        raise DomainError(message, field=first.field)
    mine = {n: normalize_whitespace(p.fields[n]) for n in project.field_names}
    for sibling in live_perturbations(pivot).exclude(pk=p.pk).exclude(status=Status.DRAFT):
        if {n: normalize_whitespace(sibling.fields[n]) for n in project.field_names} == mine:
            raise DomainError(
                f"Perturbation {sibling.pk} of this pivot already has this text.", field="fields"
            )
    if not tag_names:
        raise DomainError("Choose at least one tag.", field="tags")


def _resolve_tags(project: Project, tag_names: Any) -> list[Any]:
    if not isinstance(tag_names, list) or not all(isinstance(t, str) for t in tag_names):
        raise DomainError("tags must be a list of tag names.", field="tags")
    tags = {t.name: t for t in project.tags.filter(name__in=tag_names)}
    unknown = [name for name in tag_names if name not in tags]
    if unknown:
        raise DomainError(f"Unknown tag {unknown[0]!r}.", field="tags")
    return [tags[name] for name in dict.fromkeys(tag_names)]


def _seconds(claim: Claim | None, reported: Any, now: Any) -> tuple[int, int]:
    """(active seconds, wall seconds): the client's active time, capped by the server's clock."""
    wall = int((now - claim.opened_at).total_seconds()) if claim else 0
    active = clean_seconds_spent(reported)
    return (min(active, wall) if claim else active), wall


def perturbation_save(
    *,
    submit: bool = False,
    **content: Any,
) -> Perturbation:
    """Save a draft, then submit it if asked. A refused submission keeps the saved draft, so
    the expert's text is never lost; the error names the draft (`details["draft"]`)."""
    perturbation = draft_save(**content)
    if not submit:
        return perturbation
    try:
        return perturbation_submit(perturbation=perturbation)
    except DomainError as error:
        error.details["draft"] = perturbation.pk
        raise


@transaction.atomic
def perturbation_submit(*, perturbation: Perturbation) -> Perturbation:
    perturbation = Perturbation.objects.select_for_update().get(pk=perturbation.pk)
    tag_names = list(perturbation.tags.values_list("name", flat=True))
    _check_submission(perturbation, tag_names)
    perturbation.status = Status.SUBMITTED
    perturbation.submitted_at = timezone.now()
    perturbation.save(update_fields=["status", "submitted_at"])
    items_open_for(perturbation)
    # The expert is done with this pivot: others should not see it as claimed any more.
    Claim.objects.filter(example=perturbation.pivot, expert=perturbation.author).delete()
    return perturbation


def _apply(
    perturbation: Perturbation, *, fields: Any, label: str | None, answers: Any, rationale: Any
) -> None:
    """The draft's new fields, label, answers and rationale (None: unchanged), each checked."""
    project, pivot = perturbation.project, perturbation.pivot
    if fields is not None:
        perturbation.fields = _check_fields(project, pivot, fields)
    if label is not None:
        if label and label not in project.labels:
            raise DomainError(
                f"Unknown label {label!r}; choose one of {', '.join(project.labels)}.",
                field="label",
            )
        perturbation.label = label
    if answers is not None:
        if not project.is_free_text:
            raise DomainError("This project's perturbations take a label, not answers.")
        cleaned = clean_answers(answers, AnswerRules.of(project)) if answers else []
        if isinstance(cleaned, str):
            raise DomainError(cleaned, field="answers")
        perturbation.answers = cleaned
    if rationale is not None:
        if len(str(rationale)) > settings.IMPORT_MAX_FIELD_CHARS:
            raise DomainError(
                f"The rationale is longer than {settings.IMPORT_MAX_FIELD_CHARS:,} characters.",
                field="rationale",
            )
        perturbation.rationale = str(rationale)


@transaction.atomic
def draft_save(
    *,
    author: Any,
    pivot: Example | None = None,
    perturbation: Perturbation | None = None,
    fields: Any = None,
    label: str | None = None,
    answers: Any = None,
    tags: Any = None,
    rationale: str | None = None,
    seconds_spent: Any = None,
) -> Perturbation:
    """Create or update a draft. Raises AuthoringError when the input breaks a rule."""
    now = timezone.now()
    if perturbation is None:
        assert pivot is not None
        pivot = Example.objects.select_for_update().select_related("project").get(pk=pivot.pk)
        claim = _check_claim(pivot, author)
        if claim is None or not claim.is_live(now):
            claim = pivot_claim(pivot=pivot, expert=author)
        project = pivot.project
        perturbation = Perturbation(
            project=project,
            pivot=pivot,
            author=author,
            fields=dict(pivot.fields),
            batch_id=pivot.batch_id,
        )
    else:
        perturbation = Perturbation.objects.select_for_update().get(pk=perturbation.pk)
        if perturbation.status != Status.DRAFT:
            raise DomainError(
                f"This perturbation is {perturbation.get_status_display()}; its text is frozen. "
                "Write a new perturbation instead.",
                code="conflict",
            )
        claim = _check_claim(perturbation.pivot, author)
        _keep_revision(perturbation)
    project, pivot = perturbation.project, perturbation.pivot
    _apply(perturbation, fields=fields, label=label, answers=answers, rationale=rationale)
    tag_objects = _resolve_tags(project, tags) if tags is not None else None
    if seconds_spent is not None:
        perturbation.seconds_spent, perturbation.wall_seconds = _seconds(claim, seconds_spent, now)
    perturbation.edit_distance = fields_edit_distance(
        pivot.fields, perturbation.fields, project.editable_field_names
    )
    perturbation.guideline_version = project.current_guideline_version()
    perturbation.updated_at = now
    if perturbation.pk is None:
        cap = project.setting("max_perturbations_per_pivot")
        if live_perturbations(pivot).count() >= cap:
            raise DomainError(f"This pivot already has {cap} perturbations (the limit).")
    perturbation.save()
    if tag_objects is not None:
        perturbation.tags.set(tag_objects)
    return perturbation


def _keep_revision(perturbation: Perturbation) -> None:
    number = perturbation.revisions.count() + 1
    PerturbationRevision.objects.create(
        perturbation=perturbation,
        number=number,
        fields=perturbation.fields,
        label=perturbation.label,
        answers=perturbation.answers,
        tags=list(perturbation.tags.values_list("name", flat=True)),
        rationale=perturbation.rationale,
    )


@transaction.atomic
def perturbation_withdraw(*, perturbation: Perturbation, user: Any) -> Perturbation:
    perturbation = Perturbation.objects.select_for_update().get(pk=perturbation.pk)
    started = perturbation.status != Status.DRAFT and (
        perturbation.status != Status.SUBMITTED or perturbation_has_votes(perturbation)
    )
    if started or perturbation.status == Status.WITHDRAWN:
        raise DomainError(
            "Only drafts, and submitted perturbations nobody has voted on, can be withdrawn.",
            code="conflict",
        )
    perturbation.status = Status.WITHDRAWN
    perturbation.updated_at = timezone.now()
    perturbation.save(update_fields=["status", "updated_at"])
    item_close_for(perturbation)
    return perturbation


def perturbation_has_votes(perturbation: Perturbation) -> bool:
    return Vote.objects.filter(item__perturbation=perturbation).exists()


def allow_large_edit(*, perturbation: Perturbation, admin: Any, allow: bool) -> Perturbation:
    perturbation.allow_large_edit = allow
    perturbation.save(update_fields=["allow_large_edit"])
    AuditLog.record(
        actor=admin,
        action="large_edit_allowed" if allow else "large_edit_disallowed",
        project=perturbation.project,
        perturbation=perturbation.pk,
    )
    return perturbation
