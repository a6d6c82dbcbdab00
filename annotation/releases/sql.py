"""A label project's release in SQL (annotation.releases.copied): its perturbations chosen into
a temporary table, stored as release entries, and read back a chunk of sets at a time by
`COPY (SELECT ...) TO STDOUT` in CSV, which pyarrow reads with no Python object per row.
Table names come from the models' `_meta`; PostgreSQL only.

The choice is services.choose's, row for row: the accepted perturbations in pivot order, each
with its set's split, its label (the majority's, else the author's), its item's counted votes
per label (`n0`, `n1`, ... in project.all_labels order), and kept when it has no votes or when
enough of them agree with its label for its split.
"""

from typing import Any

from annotation.models import Example, Perturbation, ReleaseEntry, ValidationItem, Vote
from annotation.models.config import SPLITS

CHOSEN = "release_chosen"  # a temporary table, dropped at the transaction's end
AGREE = "agree"  # bundle.AGREE: what votes agree with where a label is empty


def _table(model: Any) -> str:
    return str(model._meta.db_table)


def votes(labels: list[str]) -> list[str]:
    """The vote columns of the chosen table: n0, n1, ..."""
    return [f"n{j}" for j in range(len(labels))]


def choose(
    cursor: Any,
    project_id: int,
    labels: list[str],
    options: dict[str, Any],
    split_of: dict[int, str],
) -> int:
    """Fill the chosen table (CHOSEN) for a release with these options; its number of rows.
    Its rows are written in pivot order, so that a chunk's 2,000 rows lie on some 20 pages:
    in the joins' order they lay on up to 2,000, which each of the chunk's three reads
    (originals, perturbations, entries) fetched again, and a temporary table larger than
    temp_buffers (8 MB by default: about 100k sets) fetches them from its file. At 1M sets
    the database's side cost 83 s of CPU, 63 s in pivot order (docs/performance.md)."""
    n = votes(labels)
    per_label = ", ".join(
        f"COALESCE((i.label_votes ->> %(label{j})s)::integer, 0) AS {name}"
        for j, name in enumerate(n)
    )
    agreeing = " ".join(f"WHEN %(label{j})s THEN {name}" for j, name in enumerate(n))
    minimum = " ".join(f"WHEN %(split{j})s THEN %(min{j})s" for j in range(len(SPLITS)))
    split = "x.split"
    shuffled = ""
    if split_of:  # random strategy: each set's split as arrays, joined by pivot
        split = "COALESCE(s.split, x.split)"
        shuffled = (
            "LEFT JOIN (SELECT unnest(%(pivots)s::bigint[]) AS pivot_id, "
            "unnest(%(splits)s::text[]) AS split) s ON s.pivot_id = p.pivot_id"
        )
    params: dict[str, Any] = {
        "project": project_id,
        "accepted": Perturbation.Status.ACCEPTED,
        "agree": AGREE,
        "pivots": list(split_of),
        "splits": list(split_of.values()),
        **{f"label{j}": label for j, label in enumerate(labels)},
        **{f"split{j}": s for j, s in enumerate(SPLITS)},
        **{f"min{j}": options["min_agreement"][s] for j, s in enumerate(SPLITS)},
    }
    cursor.execute(f"DROP TABLE IF EXISTS pg_temp.{CHOSEN}")
    cursor.execute(
        f"""CREATE TEMPORARY TABLE {CHOSEN} ON COMMIT DROP AS
        SELECT * FROM (
          SELECT p.id, p.pivot_id, p.author_id, i.id AS item_id, x.external_id AS set_id,
                 {split} AS split,
                 COALESCE(NULLIF(p.majority_label, ''), p.label) AS label, {per_label}
          FROM {_table(Perturbation)} p
          JOIN {_table(Example)} x ON x.id = p.pivot_id
          LEFT JOIN {_table(ValidationItem)} i ON i.perturbation_id = p.id
          {shuffled}
          WHERE p.project_id = %(project)s AND p.status = %(accepted)s) c
        WHERE ({" AND ".join(f"{name} = 0" for name in n)})
           OR CASE COALESCE(NULLIF(label, ''), %(agree)s) {agreeing} ELSE 0 END
              >= CASE split {minimum} END
        ORDER BY pivot_id, id""",
        params,
    )
    chosen = cursor.rowcount
    cursor.execute(f"CREATE INDEX ON {CHOSEN} (pivot_id, id)")
    cursor.execute(f"ANALYZE {CHOSEN}")
    return int(chosen)


def authors(cursor: Any) -> set[int]:
    cursor.execute(f"SELECT DISTINCT author_id FROM {CHOSEN}")
    return {row[0] for row in cursor.fetchall()}


def store_entries(cursor: Any, release_id: int, low: int, high: int) -> None:
    """The release's entries of the sets from pivot `low`, below `high`, in pivot order."""
    cursor.execute(
        f"""INSERT INTO {_table(ReleaseEntry)}
              (release_id, perturbation_id, set_id, split, label, answers)
            SELECT %s, id, set_id, split, label, '[]'::jsonb FROM {CHOSEN}
            WHERE pivot_id >= %s AND pivot_id < %s ORDER BY pivot_id, id""",
        [release_id, low, high],
    )


def vote_histogram(cursor: Any) -> list[tuple[int, int, int]]:
    """(validator, seconds, votes) over the votes on the chosen perturbations' items, as
    statistics.figures counts them: by the item each chosen row keeps (a perturbation has one),
    without reading the items' table again."""
    cursor.execute(
        f"""SELECT v.validator_id, v.seconds_spent, count(*) FROM {_table(Vote)} v
            JOIN {CHOSEN} c ON c.item_id = v.item_id
            GROUP BY v.validator_id, v.seconds_spent"""
    )
    return cursor.fetchall()


def chunk_starts(cursor: Any, sets: int) -> list[int]:
    """The first pivot of each chunk of `sets` sets, in pivot order."""
    cursor.execute(
        f"""SELECT pivot_id FROM (
              SELECT pivot_id, row_number() OVER (ORDER BY pivot_id) AS n
              FROM (SELECT DISTINCT pivot_id FROM {CHOSEN}) d) t
            WHERE n %% %s = 1 ORDER BY pivot_id""",
        [sets],
    )
    return [row[0] for row in cursor.fetchall()]


def widths(cursor: Any, labels: list[str], task_labels: list[str]) -> dict[str, int]:
    """Per split, the most counted votes of a chosen perturbation whose label is a task label
    (the synthetic annotators of its human F1: annotation.validation.agreement)."""
    total = " + ".join(votes(labels))
    cursor.execute(
        f"SELECT split, max({total}) FROM {CHOSEN} WHERE label = ANY(%s) AND {total} > 0 "
        "GROUP BY split",
        [task_labels],
    )
    return {split: int(width) for split, width in cursor.fetchall()}


def _plain(column: str, names: list[str]) -> str:
    """Whether a row's fields are the project's, each a string (else written from rows)."""
    each = " AND ".join(f"jsonb_typeof({column} -> %(f{j})s) = 'string'" for j in range(len(names)))
    return (
        f"CASE WHEN jsonb_typeof({column}) = 'object' "
        f"THEN {column} - %(names)s::text[] = '{{}}'::jsonb AND {each} ELSE false END"
    )


def _fields(column: str, names: list[str]) -> str:
    return ", ".join(f"{column} ->> %(f{j})s AS f{j}" for j in range(len(names)))


def originals(names: list[str]) -> str:
    """The sets of a chunk (pivots from %(low)s, below %(high)s): one row a set, with its
    number of chosen perturbations."""
    return f"""SELECT x.id, x.external_id, x.label, c.split, c.size,
                      {_fields("x.fields", names)}, {_plain("x.fields", names)} AS plain
               FROM (SELECT pivot_id, min(split) AS split, count(*) AS size FROM {CHOSEN}
                     WHERE pivot_id >= %(low)s AND pivot_id < %(high)s
                     GROUP BY pivot_id) c
               JOIN {_table(Example)} x ON x.id = c.pivot_id
               ORDER BY x.id"""


def perturbations(names: list[str], labels: list[str]) -> str:
    """The perturbations of a chunk's sets, in pivot order: their tags' ids and their vote
    columns as text (few distinct values, each turned into its JSON once)."""
    through = Perturbation.tags.through
    return f"""SELECT c.pivot_id, COALESCE(NULLIF(p.external_id, ''), 'p-' || p.id) AS id,
                      c.label, {_fields("p.fields", names)}, p.rationale, p.edit_distance,
                      p.seconds_spent, p.guideline_version, c.author_id,
                      (SELECT string_agg(t.tag_id::text, ',' ORDER BY t.tag_id)
                       FROM {_table(through)} t WHERE t.perturbation_id = p.id) AS tags,
                      concat_ws(',', {", ".join(f"c.{n}" for n in votes(labels))}) AS votes,
                      {_plain("p.fields", names)} AS plain
               FROM {CHOSEN} c JOIN {_table(Perturbation)} p ON p.id = c.id
               WHERE c.pivot_id >= %(low)s AND c.pivot_id < %(high)s
               ORDER BY c.pivot_id, c.id"""


def tag_names(cursor: Any) -> dict[str, str]:
    """Names of the tags the chosen perturbations carry, by id (as text)."""
    through = Perturbation.tags.through
    tag = through._meta.get_field("tag").related_model
    cursor.execute(
        f"""SELECT id, name FROM {_table(tag)} WHERE id IN (
              SELECT t.tag_id FROM {_table(through)} t
              JOIN {CHOSEN} c ON c.id = t.perturbation_id)"""
    )
    return {str(pk): name for pk, name in cursor.fetchall()}


def copy_params(names: list[str], low: int, high: int) -> dict[str, Any]:
    return {"low": low, "high": high, "names": names, **{f"f{j}": n for j, n in enumerate(names)}}
