"""What changed between two releases of a project."""

from typing import Any

from annotation.errors import DomainError
from annotation.models import Release, release_id


def release_diff(old: Release, new: Release) -> dict[str, Any]:
    """Sets and perturbations added, removed or relabelled from `old` to `new`."""
    if old.project_id != new.project_id:
        raise DomainError("Both releases must belong to one project.", field="against")
    columns = ("perturbation_id", "set_id", "label", "answers", "perturbation__external_id")
    a = {e[0]: (e[1], e[3] or e[2]) for e in old.entries.values_list(*columns)}
    b = {e[0]: (e[1], e[3] or e[2]) for e in new.entries.values_list(*columns)}
    ids = {
        e[0]: release_id(e[4], e[0]) for r in (old, new) for e in r.entries.values_list(*columns)
    }
    sets_a, sets_b = {v[0] for v in a.values()}, {v[0] for v in b.values()}
    relabelled = sorted(p for p in set(a) & set(b) if a[p][1] != b[p][1])
    # Files whose bytes differ (an exported prompt, a card's figures), by their digests.
    files_a, files_b = old.manifest or {}, new.manifest or {}
    files = sorted(set(files_a) | set(files_b))
    return {
        "from": old.version,
        "to": new.version,
        "sets_added": sorted(sets_b - sets_a),
        "sets_removed": sorted(sets_a - sets_b),
        "perturbations_added": sorted(ids[p] for p in set(b) - set(a)),
        "perturbations_removed": sorted(ids[p] for p in set(a) - set(b)),
        "relabelled": [{"id": ids[p], "from": a[p][1], "to": b[p][1]} for p in relabelled],
        "files_changed": [f for f in files if files_a.get(f) != files_b.get(f)],
    }
