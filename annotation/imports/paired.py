"""Paired TSV files of contrast sets (docs/workflows.md): row i of the originals file pairs with
row i of the contrasts file, as in Gardner et al.'s IMDb release."""

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from annotation.errors import ImportRejected
from annotation.imports.readers import LineError
from annotation.imports.services.originals import ParsedRow, parse_file
from annotation.models import Project


@dataclass
class ParsedSet:
    line: int | None
    original: ParsedRow
    perturbations: list[dict[str, Any]] = field(default_factory=list)  # fields, label, tags


def parse_paired_tsv(
    project: Project,
    original: bytes,
    contrast: bytes,
    *,
    mapping: dict[str, str],
    split: str,
    source_name: str,
    tags: list[str],
    label_map: dict[str, str] | None = None,
) -> list[ParsedSet]:
    stem = PurePath(source_name).stem or "set"
    common: dict[str, Any] = {
        "project": project,
        "fmt": "tsv",
        "default_split": split,
        "new_ids_only": False,
        "label_map": label_map,
    }
    tag_column = mapping.get("tags", "tags")
    mapping = {k: v for k, v in mapping.items() if k != "tags"}
    originals = parse_file(data=original, mapping=mapping, id_prefix=stem, **common)
    try:
        contrasts = parse_file(
            data=contrast,
            mapping={k: v for k, v in mapping.items() if k != "id"},
            id_prefix=f"{stem}-contrast",
            **common,
        )
    except ImportRejected as rejected:
        for error in rejected.errors:
            error.message = f"contrast file: {error.message}"
        raise
    if len(originals) != len(contrasts):
        shorter = min(len(originals), len(contrasts))
        longer = originals if len(originals) > len(contrasts) else contrasts
        raise ImportRejected(
            [
                LineError(
                    longer[shorter].line,
                    f"the originals file has {len(originals)} rows but the contrast file has "
                    f"{len(contrasts)}; row i of one must pair with row i of the other.",
                )
            ]
        )
    sets = []
    for orig, con in zip(originals, contrasts, strict=True):
        row_tags = [
            t.strip() for t in str(con.metadata.pop(tag_column, "")).split(",") if t.strip()
        ]
        perturbation = {"fields": con.fields, "label": con.label, "tags": row_tags or tags}
        sets.append(ParsedSet(con.line, orig, [perturbation]))
    return sets
