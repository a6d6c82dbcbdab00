"""Validator quality (docs/validation.md): running agreement counts, automatic unqualifying, and the
recount of items when a validator's votes stop or start counting.

A validator's agreement has one source: the `resolved_votes` and `agreed_votes` counters of
their ValidatorStatus, which count every vote they cast on a resolved item, and those that
match its majority label. Every change of an item's resolution changes them here.

Lock order: item rows (by id) before ValidatorStatus rows (by validator id), each set locked in
one pass, for votes, resolutions and bulk actions alike. A vote holds only its item's lock; its
counters change after it commits, in `resolution_recorded`. The project row is never locked
(`_locked_items`): every vote's and counter's commit checks its keys against it, and a lock
there deadlocked bulk send-backs with voting (issue 48). Unqualifying may re-resolve items and
make more validators fail: that is a loop over a work list, never a recursion.

The counters can be recounted from the votes (`counters_recounted`, `counters_repair`; the
`recount_validators` command).
"""

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import (
    AuditLog,
    Membership,
    Perturbation,
    Project,
    Release,
    ValidationItem,
    ValidatorStatus,
    Vote,
)
from annotation.validation import sql
from annotation.validation.resolution import item_resolve, vote_agrees
from annotation.webhooks import events

# validator id -> [resolved votes, agreed votes] to add
Deltas = dict[int, list[int]]
# A validator's counters as _apply returns them and _failing reads them:
# (validator id, qualified, the admin who set it or None, resolved votes, agreed votes).
Counters = Iterable[tuple[int, bool, int | None, int, int]]

_BATCH = 1000


def resolution_recorded(*, item: ValidationItem) -> None:
    """The step after a vote resolved `item` and committed: count the resolution for its
    voters, then unqualify those who now fail the project's bar (read from the counters as the
    count returns them)."""
    deltas: Deltas = defaultdict(lambda: [0, 0])
    _add_resolution(deltas, item, +1)
    try:
        counters = _apply(item.project, deltas)
    except IntegrityError:  # the counters' key: the project was deleted since the vote
        if Project.objects.filter(pk=item.project_id).exists():
            raise
        raise DomainError(
            "This project was deleted while you voted; your vote went with it.", code="not_found"
        ) from None
    _unqualify(item.project, _failing(item.project, counters))


def votes_imported(*, project: Project, deltas: Deltas) -> None:
    """Count the votes of items that arrive resolved (vote import), tallied by the importer,
    inside its transaction."""
    _apply(project, deltas)


@transaction.atomic
def items_removed(project: Project, item_ids: list[int]) -> None:
    """Before these items are deleted: lock them (by id) and take their resolutions out of
    their voters' agreement counters."""
    deltas: Deltas = defaultdict(lambda: [0, 0])
    item_ids = sorted(item_ids)
    for start in range(0, len(item_ids), _BATCH):
        chunk = item_ids[start : start + _BATCH]
        items = ValidationItem.objects.select_for_update().filter(pk__in=chunk).order_by("pk")
        resolved = {i.pk: i for i in items if i.status == ValidationItem.Status.RESOLVED}
        votes = Vote.objects.filter(item_id__in=list(resolved))
        for item_id, validator_id, label, answer in votes.values_list(
            "item_id", "validator_id", "label", "answer"
        ):
            deltas[validator_id][0] -= 1
            deltas[validator_id][1] -= vote_agrees(label, answer, resolved[item_id])
    _apply(project, deltas)


def validator_set_qualified(
    *, project: Project, validator_id: int, qualified: bool, actor: Any
) -> None:
    """Make a validator's votes count or not (an admin's decision, which automatic checks then
    respect), and reopen or resolve the items this changes. The validator must be a member of
    the project, or have votes in it (imported validators): 404 otherwise, the same for a user
    who does not exist, so that the answer tells nothing of other projects' users."""
    member = Membership.objects.filter(project=project, user_id=validator_id).exists()
    voted = Vote.objects.filter(item__project=project, validator_id=validator_id).exists()
    if not member and not voted:
        raise DomainError("No such validator in this project.", code="not_found")
    touched = _set_qualified(
        project=project, validator_id=validator_id, qualified=qualified, actor=actor
    )
    _unqualify(project, _failing(project, _counters(project, touched)))


def agreement_of(status: ValidatorStatus) -> float | None:
    if not status.resolved_votes:
        return None
    return round(status.agreed_votes / status.resolved_votes, 4)


def _add_resolution(deltas: Deltas, item: ValidationItem, sign: int) -> None:
    for validator_id, label, answer in sql.voters_of(item.pk):
        deltas[validator_id][0] += sign
        deltas[validator_id][1] += sign if vote_agrees(label, answer, item) else 0


def _apply(project: Project, deltas: Deltas) -> Counters:
    """Add `deltas` to the counters, locking them in validator order in one pass; returns the
    counters that changed."""
    now = timezone.now()
    voters = sorted(deltas)
    groups: dict[tuple[int, int], list[int]] = defaultdict(list)
    for validator_id, (resolved, agreed) in deltas.items():
        if resolved or agreed:
            groups[resolved, agreed].append(validator_id)
    counters: list[Any] = []
    with transaction.atomic():
        for start in range(0, len(voters), _BATCH):
            batch = voters[start : start + _BATCH]
            sql.lock_counters(project_id=project.pk, validator_ids=batch, now=now)
        for (resolved, agreed), ids in groups.items():
            for start in range(0, len(ids), _BATCH):
                counters += sql.add_to_counters(
                    project_id=project.pk,
                    validator_ids=ids[start : start + _BATCH],
                    resolved=resolved,
                    agreed=agreed,
                )
    return counters


def _counters(project: Project, voters: list[int]) -> Counters:
    return ValidatorStatus.objects.filter(project=project, validator_id__in=voters).values_list(
        "validator_id", "qualified", "changed_by_id", "resolved_votes", "agreed_votes"
    )


def _failing(project: Project, counters: Counters) -> list[int]:
    """Qualified voters, never set by an admin, who disagreed with the majority too often."""
    min_votes = max(project.setting("validator_min_votes"), 1)
    max_disagreement = project.setting("validator_max_disagreement")
    return sorted(
        v
        for v, qualified, admin, n, agreed in counters
        if qualified and admin is None and n >= min_votes and 1 - agreed / n > max_disagreement
    )


def _unqualify(project: Project, pending: list[int]) -> None:
    while pending:
        touched = _set_qualified(
            project=project, validator_id=pending.pop(0), qualified=False, actor=None
        )
        pending = sorted(set(pending) | set(_failing(project, _counters(project, touched))))


@transaction.atomic
def _set_qualified(
    *, project: Project, validator_id: int, qualified: bool, actor: Any
) -> list[int]:
    """One transaction: flip the validator's votes, recount the items they are on, and update
    every counter this moves. Returns the voters whose counts changed."""
    # The agreement that led to the decision, before reopened items leave the counts.
    before = ValidatorStatus.objects.filter(project=project, validator_id=validator_id).first()
    agreement = agreement_of(before) if before else None
    votes = Vote.objects.filter(item__project=project, validator_id=validator_id)
    affected = list(votes.exclude(counts=qualified).values_list("item_id", flat=True))
    locked = _locked_items(affected)
    votes.update(counts=qualified)
    deltas: Deltas = defaultdict(lambda: [0, 0])
    for item in locked:
        _recount(item, deltas)
    deltas.setdefault(validator_id, [0, 0])  # its status row is locked in the same pass
    _apply(project, deltas)
    status = ValidatorStatus.objects.get(project=project, validator_id=validator_id)
    status.qualified = qualified
    status.changed_at = timezone.now()
    status.changed_by = actor if actor is not None and actor.is_authenticated else None
    if qualified:  # an admin's requalifying also lifts a gold checks' pause, afresh
        status.paused, status.paused_at, status.gold_seen, status.gold_correct = False, None, 0, 0
    status.save(
        update_fields=[
            "qualified",
            "changed_at",
            "changed_by",
            "paused",
            "paused_at",
            "gold_seen",
            "gold_correct",
        ]
    )
    AuditLog.record(
        actor=actor,
        action="validator_requalified" if qualified else "validator_unqualified",
        project=project,
        validator=validator_id,
        agreement=agreement,
        items=len(affected),
    )
    return sorted(v for v, delta in deltas.items() if any(delta))


@transaction.atomic
def votes_discounted(*, project: Project, validator_id: int, after_vote: int) -> int:
    """A validator paused by the gold checks: their counting votes after `after_vote` (their
    latest when they last passed a gold item) stop counting, and their items recount, as an
    unqualifying recounts them: resolved, unreleased items reopen for replacement votes.
    Returns how many votes stopped counting."""
    votes = Vote.objects.filter(
        item__project=project, validator_id=validator_id, counts=True, id__gt=after_vote
    )
    affected = list(votes.values_list("item_id", flat=True))
    locked = _locked_items(affected)
    Vote.objects.filter(validator_id=validator_id, item_id__in=affected).update(counts=False)
    deltas: Deltas = defaultdict(lambda: [0, 0])
    for item in locked:
        _recount(item, deltas)
    _apply(project, deltas)
    return len(affected)


@transaction.atomic
def item_reopen(*, item: ValidationItem, extra_votes: int) -> None:
    """Reopen a resolved item for `extra_votes` more counted votes (an admin's answer to no
    majority). Its resolution leaves the validators' agreement counters until it resolves
    again; its votes all stay."""
    [item] = _locked_items([item.pk])
    if item.status != ValidationItem.Status.RESOLVED or _is_released(item):
        raise DomainError("Only resolved, unreleased items can be reopened.", code="conflict")
    deltas: Deltas = defaultdict(lambda: [0, 0])
    _reopen(item, deltas)
    item.extra_votes += extra_votes
    item.save(
        update_fields=["status", "majority_label", "majority_answers", "resolved_at", "extra_votes"]
    )
    _apply(item.project, deltas)


def item_send_back(*, item: ValidationItem, clear_votes: bool, extra_votes: int) -> None:
    items_send_back(item_ids=[item.pk], clear_votes=clear_votes, extra_votes=extra_votes)


def _locked_items(ids: Iterable[int]) -> list[ValidationItem]:
    """The items, locked by id in one pass, each with its project read but not locked."""
    items = ValidationItem.objects.select_for_update(of=("self",)).select_related("project")
    return list(items.filter(pk__in=list(ids)).order_by("pk"))


@transaction.atomic
def items_send_back(*, item_ids: Iterable[int], clear_votes: bool, extra_votes: int) -> None:
    """Send unreleased items back to the queue: with their votes cleared (a fresh start), or
    kept and `extra_votes` more asked for where resolved. One transaction: the items locked by
    id, then their voters' counters in one pass, as votes and resolutions lock them."""
    items = _locked_items(item_ids)
    if any(_is_released(item) for item in items):
        raise DomainError("A released item never changes.", code="conflict")
    deltas: Deltas = defaultdict(lambda: [0, 0])
    for item in items:
        _send_back(item, deltas, clear_votes=clear_votes, extra_votes=extra_votes)
    if items:
        _apply(items[0].project, deltas)
        project, sent = items[0].project, [i.perturbation_id for i in items if i.perturbation_id]
        transaction.on_commit(lambda: events.perturbations_sent_back(project, sent), robust=True)


def _send_back(
    item: ValidationItem, deltas: Deltas, *, clear_votes: bool, extra_votes: int
) -> None:
    resolved = item.status == ValidationItem.Status.RESOLVED
    if resolved:
        _reopen(item, deltas)
    item.status = ValidationItem.Status.OPEN
    if clear_votes:
        item.votes.all().delete()
        item.leases.all().delete()
        item.counted_votes, item.label_votes, item.extra_votes = 0, {}, 0
    elif resolved:
        item.extra_votes += extra_votes
    item.save(
        update_fields=[
            "status",
            "majority_label",
            "majority_answers",
            "resolved_at",
            "extra_votes",
            "counted_votes",
            "label_votes",
        ]
    )
    _perturbation_reopened(item)


def _reopen(item: ValidationItem, deltas: Deltas) -> None:
    _add_resolution(deltas, item, -1)
    item.status = ValidationItem.Status.OPEN
    item.majority_label, item.majority_answers = "", []
    item.resolved_at = None
    _perturbation_reopened(item)


def _perturbation_reopened(item: ValidationItem) -> None:
    """The item's perturbation waits for its validation again, with no majority."""
    if item.perturbation_id is not None:
        Perturbation.objects.filter(pk=item.perturbation_id).update(
            status=Perturbation.Status.SUBMITTED,
            majority_label="",
            majority_answers=[],
            resolved_at=None,
        )


def _recount(item: ValidationItem, deltas: Deltas) -> None:
    """Bring a locked item in line with its counted votes after a qualification change."""
    counted = item.votes.filter(counts=True).values_list("label").annotate(n=Count("id"))
    item.label_votes = dict(counted.order_by())
    item.counted_votes = sum(item.label_votes.values())
    needed = item.votes_needed(item.project)
    resolved = item.status == ValidationItem.Status.RESOLVED
    if resolved and item.counted_votes < needed and not _is_released(item):
        _reopen(item, deltas)
    item.save(
        update_fields=[
            "counted_votes",
            "label_votes",
            "status",
            "majority_label",
            "majority_answers",
            "resolved_at",
        ]
    )
    if item.status == ValidationItem.Status.OPEN and item.counted_votes >= needed:
        item_resolve(item=item)
        _add_resolution(deltas, item, +1)


def _is_released(item: ValidationItem) -> bool:
    """Released perturbations keep their resolution: a release never changes."""
    return (
        item.perturbation_id is not None
        and Release.objects.filter(perturbations__item=item).exists()
    )


def counters_recounted(project: Project) -> dict[int, tuple[int, int]]:
    """Each voter's (resolved votes, agreed votes) as the votes say: every vote on a resolved
    item, and those that agree with its outcome; what the counters hold when nothing is in
    flight."""
    counts: Deltas = defaultdict(lambda: [0, 0])
    resolved = ValidationItem.objects.filter(project=project, status=ValidationItem.Status.RESOLVED)
    ids = list(resolved.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), _BATCH):
        items = {
            i.pk: i
            for i in resolved.select_related("project").filter(pk__in=ids[start : start + _BATCH])
        }
        votes = Vote.objects.filter(item_id__in=list(items))
        for item_id, validator_id, label, answer in votes.values_list(
            "item_id", "validator_id", "label", "answer"
        ):
            counts[validator_id][0] += 1
            counts[validator_id][1] += vote_agrees(label, answer, items[item_id])
    return {v: (r, a) for v, (r, a) in counts.items()}


@transaction.atomic
def counters_repair(project: Project) -> dict[int, tuple[tuple[int, int], tuple[int, int]]]:
    """Set every counter of the project to its recount; returns {validator: (was, now)} for
    those that differed. Exact while no vote is in flight (a resolution's counts follow its
    commit)."""
    right = counters_recounted(project)
    statuses = ValidatorStatus.objects.select_for_update().filter(project=project)
    changed = {}
    for status in statuses.order_by("validator_id"):
        was = (status.resolved_votes, status.agreed_votes)
        now = right.pop(status.validator_id, (0, 0))
        if was != now:
            status.resolved_votes, status.agreed_votes = now
            status.save(update_fields=["resolved_votes", "agreed_votes"])
            changed[status.validator_id] = (was, now)
    for validator_id, now in sorted(right.items()):  # voters without a counter yet
        ValidatorStatus.objects.create(
            project=project, validator_id=validator_id, resolved_votes=now[0], agreed_votes=now[1]
        )
        changed[validator_id] = ((0, 0), now)
    return changed
