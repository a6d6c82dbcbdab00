"""The gold pool (docs/validation.md, "Validation with a crowd"): items whose right response is
known, drawn from the project's accepted perturbations and its labelled originals, and the
comprehension questions the admin writes in the settings."""

import random
from typing import Any

from annotation.models import Example, GoldItem, Perturbation, Project, ValidationItem
from annotation.models.validation import public_item_id

# Enough for every validator's test and checks, bounded so that drawing stays cheap.
POOL_SIZE = 500
_random = random.Random()


def pool_refresh(project: Project) -> int:
    """Add gold items up to POOL_SIZE: accepted perturbations and labelled originals not in
    the pool yet, drawn at random. Returns the pool's size."""
    pool = GoldItem.objects.filter(project=project, kind=GoldItem.Kind.POOL)
    room = POOL_SIZE - pool.count()
    if room <= 0:
        return POOL_SIZE
    accepted = (
        ValidationItem.objects.filter(
            project=project, perturbation__status=Perturbation.Status.ACCEPTED
        )
        .exclude(pk__in=pool.filter(source_item__isnull=False).values("source_item_id"))
        .order_by("?")
        .values_list("pk", "fields", "gold_label", "gold_answers", "author_id")[:room]
    )
    originals = (
        _labelled(project)
        .exclude(pk__in=pool.filter(source_example__isnull=False).values("source_example_id"))
        .order_by("?")
        .values_list("pk", "fields", "label", "answers")[:room]
    )
    made = [
        GoldItem(
            id=public_item_id(),
            project=project,
            source_item_id=pk,
            fields=fields,
            gold_label=label,
            gold_answers=answers,
            author_id=author,
        )
        for pk, fields, label, answers, author in accepted
    ] + [
        GoldItem(
            id=public_item_id(),
            project=project,
            source_example_id=pk,
            fields=fields,
            gold_label=label,
            gold_answers=answers,
        )
        for pk, fields, label, answers in originals
    ]
    _random.shuffle(made)
    GoldItem.objects.bulk_create(made[:room], ignore_conflicts=True)
    return pool.count()


def _labelled(project: Project) -> Any:
    if project.is_free_text:
        return Example.objects.filter(project=project).exclude(answers=[])
    return Example.objects.filter(project=project, label__in=project.labels)


def current_questions(project: Project) -> list[GoldItem]:
    """The gold items of the comprehension questions as the settings hold them now, made on
    first use; a question the admin changed becomes a new item (its answers stay with the old
    one, which is no longer drawn)."""
    wanted = project.setting("qualification_questions")
    if not wanted:
        return []
    existing = GoldItem.objects.filter(project=project, kind=GoldItem.Kind.QUESTION)
    by_content = {_content(g.fields, g.gold_label, g.gold_answers): g for g in existing}
    items = []
    for position, question in enumerate(wanted):
        key = _content(question["fields"], question.get("label", ""), question.get("answers", []))
        item = by_content.get(key)
        if item is None:
            item = GoldItem.objects.create(
                id=public_item_id(),
                project=project,
                kind=GoldItem.Kind.QUESTION,
                position=position,
                fields=question["fields"],
                gold_label=question.get("label", ""),
                gold_answers=question.get("answers", []),
            )
        items.append(item)
    return items


def _content(fields: dict[str, Any], label: str, answers: list[Any]) -> str:
    return repr((sorted(fields.items()), label, list(answers)))


def pool_size(project: Project) -> int:
    return GoldItem.objects.filter(project=project, kind=GoldItem.Kind.POOL).count()


def draw(project: Project, validator: Any, n: int, avoid: set[int]) -> list[int]:
    """Ids of `n` pool items for a validator's test: none they wrote, and none of `avoid`
    (items of their earlier attempts) while the pool has others."""
    pool = GoldItem.objects.filter(project=project, kind=GoldItem.Kind.POOL).exclude(
        author_id=validator.pk
    )
    ids = list(pool.values_list("pk", flat=True))
    if not ids:
        pool_refresh(project)
        ids = list(pool.values_list("pk", flat=True))
    fresh = [pk for pk in ids if pk not in avoid]
    chosen = _random.sample(fresh, min(n, len(fresh)))
    if len(chosen) < n:
        chosen += _random.sample(
            [pk for pk in ids if pk in avoid], min(n - len(chosen), len(ids) - len(fresh))
        )
    return chosen
