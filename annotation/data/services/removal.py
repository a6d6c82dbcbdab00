"""Deleting what a project holds, and undoing an import (docs/data.md).

One rule for every delete: a perturbation in a published release is kept, because a release
never changes (its zip, entries and statistics stay as published). Everything else that hangs on
what is deleted goes with it: an original takes its perturbations, a perturbation its revisions
and validation item, an item its votes and leases; the validators' agreement counters lose the
resolutions that leave. Each delete is one transaction, counted first (`plan`) so that the page
can say what will go, and written to the audit log with its counts.

A delete that a concurrent request makes impossible (a release published, a validator served,
an import committed, the same undo twice) is refused with 409 and what to do, and changes
nothing (`tests/annotation/data/test_races.py`)."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet

from annotation.bulk import atomic_or_conflict
from annotation.errors import DomainError
from annotation.models import (
    AuditLog,
    Example,
    ImportBatch,
    Perturbation,
    Project,
    ReleaseEntry,
    ValidationItem,
    Vote,
)
from annotation.uploads import remove_uploads, uploads_of
from annotation.validation.services.quality import items_removed

DELETE_RACE = (
    "A release was published, or these rows were written to, while they were being deleted: "
    "nothing was deleted. Reload the page and delete again; what a release holds is kept."
)
UNDO_RACE = (
    "A release was published, or this import's rows were written to, while it was being "
    "undone: nothing was undone. Reload the page and undo it again."
)
PROJECT_RACE = (
    "Validators or an import were at work in this project while it was being deleted: nothing "
    "was deleted. Delete it again; to stop the validators first, remove their roles on the "
    "Members page."
)


@dataclass
class Removal:
    """What a delete takes away (querysets, read inside its transaction), its counts, and what
    it keeps for releases: {release version: perturbations of the selection it holds}."""

    originals: "QuerySet[Example]"
    perturbations: "QuerySet[Perturbation]"
    kept: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def items(self) -> "tuple[QuerySet[ValidationItem], QuerySet[ValidationItem]]":
        """The validation items that go: the perturbations' and, as controls, the originals'
        (no item is both: item_is_perturbation_control_or_external). Two queries, each a
        semi-join: one with an OR of the two made PostgreSQL run the perturbations' subquery
        again for each item of the project (an import's undo ran over 14 min at 1M items)."""
        return (
            ValidationItem.objects.filter(perturbation__in=self.perturbations.values("pk")),
            ValidationItem.objects.filter(control__in=self.originals.values("pk")),
        )

    def item_ids(self) -> list[int]:
        return sorted(pk for items in self.items() for pk in items.values_list("pk", flat=True))

    def summary(self) -> dict[str, Any]:
        return {**self.counts, "kept": self.kept}


def plan(
    project: Project,
    *,
    originals: "QuerySet[Example] | None" = None,
    perturbations: "QuerySet[Perturbation] | None" = None,
) -> Removal:
    """What deleting these originals (with every perturbation written on them) and these
    perturbations takes away. A released perturbation is kept, and so is its original."""
    originals = (originals if originals is not None else Example.objects.none()).filter(
        project=project
    )
    chosen = perturbations if perturbations is not None else Perturbation.objects.none()
    candidates = Perturbation.objects.filter(project=project).filter(
        Q(pk__in=chosen.values("pk")) | Q(pivot__in=originals.values("pk"))
    )
    released = ReleaseEntry.objects.filter(perturbation__in=candidates.values("pk"))
    kept = Counter(version for (version,) in released.values_list("release__version"))
    removal = Removal(
        originals=originals.exclude(pk__in=released.values("perturbation__pivot_id")),
        perturbations=candidates.exclude(pk__in=released.values("perturbation_id")),
        kept=dict(sorted(kept.items())),
    )
    items = removal.items()
    controls = items[1].count()
    removal.counts = {
        "originals": removal.originals.count(),
        "perturbations": removal.perturbations.count(),
        "items": items[0].count() + controls,
        "controls": controls,
        "votes": sum(Vote.objects.filter(item__in=some.values("pk")).count() for some in items),
    }
    return removal


@transaction.atomic
def _remove(project: Project, removal: Removal) -> None:
    """Delete what `removal` names. Items are locked (by id, the order votes lock them) and
    their resolutions leave the agreement counters before the rows go."""
    items_removed(project, removal.item_ids())
    removal.perturbations.delete()
    # With any perturbation written on them since the plan (none released: planned so)
    Perturbation.objects.filter(pivot__in=removal.originals.values("pk")).delete()
    removal.originals.delete()


def items_delete(
    *,
    project: Project,
    actor: Any,
    originals: Sequence[int] = (),
    perturbations: Sequence[int] = (),
    **logged: Any,
) -> Removal:
    """Delete originals and perturbations by id (the Data page's bulk delete), keeping what
    releases hold; `logged` goes into the audit entry (the filters that chose them)."""
    with atomic_or_conflict(DELETE_RACE):
        removal = plan(
            project,
            originals=Example.objects.filter(pk__in=list(originals)),
            perturbations=Perturbation.objects.filter(pk__in=list(perturbations)),
        )
        _remove(project, removal)
        AuditLog.record(
            actor=actor, action="items_deleted", project=project, **removal.summary(), **logged
        )
    return removal


def batch_plan(batch: ImportBatch) -> Removal:
    """What undoing an import takes away: the originals it added, the perturbations it brought,
    and everything written on those originals since."""
    return plan(
        batch.project,
        originals=Example.objects.filter(batch=batch),
        perturbations=Perturbation.objects.filter(batch=batch),
    )


def batch_undo(*, batch: ImportBatch, actor: Any) -> Removal:
    """Undo an import whole, or refuse (409) when a release holds any of it: a release never
    changes, and half an import undone is not an undo."""
    with atomic_or_conflict(UNDO_RACE):
        locked = ImportBatch.objects.select_for_update().filter(pk=batch.pk).first()
        if locked is None:  # another request undid it while this one waited for the lock
            raise DomainError(
                "This import was already undone, by another request: reload the Import page.",
                code="conflict",
            )
        batch = locked
        removal = batch_plan(batch)
        if removal.kept:
            held = ", ".join(f"{n} in release {v}" for v, n in sorted(removal.kept.items()))
            raise DomainError(
                f"This import cannot be undone: published releases hold its perturbations "
                f"({held}), and a release never changes. Delete the rest from the Data page.",
                code="conflict",
            )
        _remove(batch.project, removal)
        pk = batch.pk
        batch.delete()
        AuditLog.record(
            actor=actor,
            action="import_undone",
            project=batch.project,
            batch=pk,
            source=batch.source_name,
            **removal.counts,
        )
    return removal


def project_delete(*, project: Project, actor: Any, confirm: str) -> None:
    """Delete a project and everything in it, once its slug is typed; refused (409) while it
    has published releases, which never change. Its uploads (background imports' files,
    staged previews) go once the delete commits."""
    if confirm != project.slug:
        raise DomainError(f"Type the project's slug ({project.slug}) to confirm.", field="confirm")
    versions = list(project.releases.values_list("version", flat=True))
    if versions:
        raise DomainError(
            f"This project has published releases ({', '.join(versions)}); a release never "
            "changes, so the project is kept.",
            code="conflict",
        )
    slug, name = project.slug, project.name
    with atomic_or_conflict(PROJECT_RACE):
        uploads = uploads_of(project)
        transaction.on_commit(lambda: remove_uploads(uploads))
        counts = {
            "originals": project.examples.count(),
            "perturbations": project.perturbations.count(),
        }
        # Children before what they protect: perturbations, then originals, then the rest.
        project.perturbations.all().delete()
        project.examples.all().delete()
        project.delete()
        AuditLog.record(
            actor=actor, action="project_deleted", project=None, slug=slug, name=name, **counts
        )
