"""The bundle's own writers against the standard library's."""

import csv
import io

from hypothesis import given
from hypothesis import strategies as st

from annotation.releases.files import tsv_line

TEXT = st.text(alphabet=st.sampled_from(list("ab \t\n\r\"'\\é")), max_size=8)


@given(st.lists(TEXT, min_size=1, max_size=3))
def test_tsv_lines_are_what_the_csv_module_writes(values):
    out = io.StringIO()
    csv.writer(out, delimiter="\t", lineterminator="\n").writerow(values)
    assert tsv_line(values) == out.getvalue()
