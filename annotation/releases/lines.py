"""JSON lines from Arrow columns, byte for byte as orjson writes the same dicts: each value
becomes its JSON text by Arrow's kernels (strings escaped as orjson escapes them), then
objects are these texts joined row by row, so that no dict is built for a row
(`member_lines`: a chunk's sets and examples). And TSV rows, as
annotation.text.cells writes them."""

from collections.abc import Callable

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from annotation.releases.members import Members
from annotation.text.cells import spreadsheet_cell

TEXT = pa.string()
# orjson's escapes; any other character below U+0020 is written \u00XX, and none above.
ESCAPES = (
    ("\\", "\\\\"),
    ('"', '\\"'),
    ("\n", "\\n"),
    ("\r", "\\r"),
    ("\t", "\\t"),
    ("\b", "\\b"),
    ("\f", "\\f"),
)
NEEDS_ESCAPE = r'[\\"\x00-\x1f]'
OTHER_CONTROLS = r"[\x00-\x07\x0b\x0e-\x1f]"


def key(name: str) -> str:
    return orjson.dumps(name).decode()


def _mask(values: pa.Array, pattern: str) -> pa.Array:
    return pc.fill_null(pc.match_substring_regex(values, pattern), False)


def escaped(values: pa.Array) -> pa.Array:
    """Each string's JSON text without its quotes (nulls stay null): one pass to find the
    strings that need an escape, the escapes on those alone."""
    needs = _mask(values, NEEDS_ESCAPE)
    if not pc.any(needs).as_py():
        return values
    some = values.filter(needs)
    for old, new in ESCAPES:
        some = pc.replace_substring(some, old, new)
    controls = _mask(values.filter(needs), OTHER_CONTROLS)
    if pc.any(controls).as_py():  # rare: orjson's own text for those few
        exact = [orjson.dumps(v).decode()[1:-1] for v in values.filter(needs).to_pylist()]
        some = pc.if_else(controls, pa.array(exact, TEXT), some)
    return pc.replace_with_mask(values, needs, some)


def quoted(escaped_values: pa.Array) -> pa.Array:
    """Escaped strings (`escaped`) in their quotes; a null as null."""
    return pc.fill_null(pc.binary_join_element_wise('"', escaped_values, '"', ""), "null")


def strings(values: pa.Array) -> pa.Array:
    """Each string as JSON: quoted and escaped; a null as null."""
    return quoted(escaped(values))


def few_strings(values: pa.Array) -> pa.Array:
    """`strings` for a column of few distinct values (splits, labels, authors): each distinct
    value written once by orjson."""
    encoded = pc.dictionary_encode(values)
    texts = [orjson.dumps(v).decode() for v in encoded.dictionary.to_pylist()]
    return pc.fill_null(pa.array(texts, TEXT).take(encoded.indices), "null")


def numbers(values: pa.Array) -> pa.Array:
    """Integers as Arrow writes them; floats as orjson does (1.0, where Arrow writes 1)."""
    if pa.types.is_floating(values.type):
        text = orjson.dumps(values.to_pylist()).decode()[1:-1]
        return pa.array(text.split(",") if text else [], TEXT)
    return pc.fill_null(pc.cast(values, TEXT), "null")


def booleans(values: pa.Array) -> pa.Array:
    return pc.fill_null(pc.if_else(values, "true", "false"), "null")


def _joined(lists: pa.Array, items: pa.Array, separator: str) -> pa.Array:
    """Each row's items (texts in the order of `lists`' flattened values) joined."""
    lengths = pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False)
    offsets = pa.array([0, *lengths.cumsum()], pa.int32())
    return pc.binary_join(pa.ListArray.from_arrays(offsets, items), separator)


def string_lists(values: pa.Array) -> pa.Array:
    """Lists of strings as JSON arrays."""
    inner = _joined(values, strings(values.flatten()), ",")
    return pc.binary_join_element_wise("[", inner, "]", "")


def counts(values: pa.Array) -> pa.Array:
    """Lists of (response, count) as the JSON object they were counted in."""
    pairs = values.flatten()
    items = pc.binary_join_element_wise(
        strings(pairs.field("response")), numbers(pairs.field("count")), ":"
    )
    return pc.binary_join_element_wise("{", _joined(values, items, ","), "}", "")


def objects(members: list[tuple[str, pa.Array | str]]) -> pa.Array:
    """Each row's {"name":value,...}, the values being JSON texts (arrays, or one text for
    every row)."""
    parts: list[pa.Array | str] = []
    for n, (name, value) in enumerate(members):
        parts += [("{" if n == 0 else ",") + key(name) + ":", value]
    return pc.binary_join_element_wise(*parts, "}", "")


def listed(items: pa.Array, offsets: pa.Array) -> pa.Array:
    """JSON arrays of `items`' texts, row i holding items offsets[i] to offsets[i + 1]."""
    inner = pc.binary_join(pa.ListArray.from_arrays(offsets, items), ",")
    return pc.binary_join_element_wise("[", inner, "]", "")


def buffer(lines: pa.Array) -> memoryview:
    """The texts, each followed by a line end, in one buffer (Arrow's, not copied again)."""
    if not len(lines):
        return memoryview(b"")
    ended = pa.concat_arrays([lines, pa.array([""], TEXT)])  # the last line's end
    offsets = pa.array([0, len(ended)], pa.int32())
    whole = pc.binary_join(pa.ListArray.from_arrays(offsets, ended), "\n")
    return memoryview(whole[0].as_buffer())


# TSV rows (annotation.text.cells) ------------------------------------------------------------


def tsv_cells(values: pa.Array) -> pa.Array:
    """Each value as annotation.text.cells writes it in a TSV row: a line that starts like a
    formula (or with an apostrophe) gets an apostrophe, and a cell holding a tab, a line break
    or a quote is quoted. Cells of several lines, which are few, go through spreadsheet_cell."""
    text = pc.cast(values, TEXT)
    cells = _where(text, "^[=+\\-@\t\r']", lambda some: pc.binary_join_element_wise("'", some, ""))
    lines = pc.match_substring_regex(text, "[\r\n]")
    if pc.any(lines).as_py():
        indices = pc.indices_nonzero(lines)
        escaped = [spreadsheet_cell(v) for v in text.take(indices).to_pylist()]
        cells = pc.replace_with_mask(cells, lines, pa.array(escaped, TEXT))
    return _where(cells, '[\t\n\r"]', _quoted)


def _quoted(cells: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise('"', pc.replace_substring(cells, '"', '""'), '"', "")


def _where(values: pa.Array, pattern: str, change: Callable[[pa.Array], pa.Array]) -> pa.Array:
    """`values` with `change` made to those that match `pattern` (few): only those copied."""
    matches = pc.fill_null(pc.match_substring_regex(values, pattern), False)
    if not pc.any(matches).as_py():
        return values
    return pc.replace_with_mask(values, matches, change(values.filter(matches)))


def tsv_lines(columns: list[pa.Array]) -> bytes:
    """Rows of these columns as TSV lines (tsv_line's), in one buffer."""
    if not len(columns[0]):
        return b""
    cells = [tsv_cells(column) for column in columns]
    lines = pc.binary_join_element_wise(*cells, "\t")
    whole = pc.binary_join(
        pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines), "\n"
    )
    return whole[0].as_buffer().to_pybytes() + b"\n"


# A chunk's JSON lines ---------------------------------------------------------------------------

Chunk = bytes | memoryview  # a chunk's lines, as `buffer` gives them
PERTURBATION = (  # a released perturbation's keys in sets.jsonl, in order
    "id",
    "fields",
    "label",
    "label_changed",
    "tags",
    "rationale",
    "author",
    "votes",
    "agreement",
    "edit_distance",
    "seconds_spent",
    "guideline_version",
)


def member_lines(m: Members) -> tuple[Chunk, Chunk]:
    """A plain chunk's sets and examples as JSON lines."""
    assert m.field_order is not None
    texts = {
        name: [escaped(side[name]) for side in (m.originals, m.perturbed)] for name in m.field_order
    }  # the fields' texts, escaped once
    o, p = (
        {
            name: quoted(texts[name][k]) if name in texts else _json(name, column)
            for name, column in side.items()
        }
        for k, side in enumerate((m.originals, m.perturbed))
    )
    for side in (o, p):
        side["fields"] = objects([(name, side[name]) for name in m.field_order])
    original = objects([("id", o["id"]), ("fields", o["fields"]), ("label", o["label"])])
    perturbation = objects([(name, p[name]) for name in PERTURBATION])
    sets = objects(
        [
            ("set_id", o["set_id"]),
            ("split", o["split"]),
            ("original", original),
            ("perturbations", listed(perturbation, offsets(m.sizes))),
        ]
    )
    fields = [(name, m.in_order(o[name], p[name])) for name in m.field_order]
    head = [(name, m.in_order(o[name], p[name])) for name in ("id", "set_id")]
    n_sets, n_perturbed = len(m.sizes), len(m.owners)
    role = m.in_order(pa.repeat('"original"', n_sets), pa.repeat('"perturbed"', n_perturbed))
    split = m.in_order(o["split"], p["split"])
    label = m.in_order(o["label"], p["label"])
    tail = [
        ("label", label),
        ("label_changed", m.in_order(pa.repeat("null", n_sets), p["label_changed"])),
        ("tags", m.in_order(pa.repeat("[]", n_sets), p["tags"])),
        ("votes", m.in_order(pa.repeat("{}", n_sets), p["votes"])),
    ]
    examples = objects([*head, ("role", role), ("split", split), *fields, *tail])
    return buffer(sets), buffer(examples)


def offsets(sizes: np.ndarray) -> pa.Array:
    """List offsets of rows of `sizes` items each."""
    out = np.zeros(len(sizes) + 1, np.int32)
    np.cumsum(sizes, out=out[1:])
    return pa.array(out)


def _json(name: str, column: pa.Array) -> pa.Array:
    """A column's values as JSON texts."""
    kind = column.type
    if name in ("split", "label", "author"):
        return few_strings(column)
    if pa.types.is_string(kind):
        return strings(column)
    if pa.types.is_boolean(kind):
        return booleans(column)
    if pa.types.is_list(kind) and pa.types.is_struct(kind.value_type):
        return counts(column)
    if pa.types.is_list(kind):
        return string_lists(column)
    return numbers(column)
