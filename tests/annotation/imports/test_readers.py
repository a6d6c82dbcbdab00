import json

import pytest

from annotation.imports.readers import json_line
from annotation.text.parsing import strict_json_loads

LINES = [
    '{"id": "a", "text": "A good film: really.", "label": "positive"}',
    '{"a": {"b": [1, 2.5, -0, -0.0, 1E2, 1e-400, true, null]}, "c": "\\u00e9\\/\\"x"}',
    '{"a": 1, "a": 2}',
    '{"a": {"b": 1, "b": 1}, "c": ":"}',
    '{"a\\u003a": 1, "a:": 2}',
    '{"a": "\\u0000"}',
    '{"a": "\\ud800"}',
    '{"a": 18446744073709551615, "b": 18446744073709551616, "c": -9223372036854775809}',
    '{"a": 123456789012345678901234567890}',
    '{"a": 1.5e20, "b": "e+"}',
    '{"a": 1e400}',
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": "x\ty"}',
    '{"a": 1,}',
    '{"a": 01}',
    "{} x",
    '\x0c{"a": 1}',
    '{"a": 1}\r',
    "[" * 64 + "]" * 64,
    "[" * 65 + "]" * 65,
]


@pytest.mark.parametrize("line", LINES)
def test_a_json_line_reads_as_the_strict_reader_reads_it(line):
    try:
        expected: object = strict_json_loads(line)
    except ValueError as error:
        with pytest.raises(type(error)) as raised:
            json_line(line)
        assert str(raised.value) == str(error)
        return
    read = json_line(line)
    assert read == expected and json.dumps(read) == json.dumps(expected)
