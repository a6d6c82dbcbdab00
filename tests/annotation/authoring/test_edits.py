from hypothesis import given
from hypothesis import strategies as st

from annotation.text.edits import (
    edit_distance,
    fields_edit_distance,
    levenshtein,
    normalize_whitespace,
    same_text,
    tokenize,
    word_diff,
)

words = st.lists(
    st.sampled_from(["good", "bad", "not", "film", "the", ",", ".", "very", "é", "ok!"]),
    max_size=25,
)
texts = st.text(alphabet=st.sampled_from(list("ab c,.\n\tÉé!")), max_size=60)


def test_distance_is_token_levenshtein_over_longer_length():
    # "was good" -> "was not bad": insert "not", substitute good->bad: 2 edits over 6 tokens.
    assert edit_distance("The film was good.", "The film was not bad.") == 2 / 6
    assert edit_distance("Great.", "Great.") == 0.0
    assert edit_distance("", "") == 0.0
    assert levenshtein(["a", "b", "c"], ["a", "c"]) == 1


def test_whitespace_never_counts_as_an_edit():
    assert edit_distance("a  good\nfilm", "a good film") == 0.0


def test_diff_marks_inserted_and_deleted_words():
    assert word_diff("The film was good.", "The film was not bad.") == [
        ("equal", "The film was "),
        ("delete", "good"),
        ("insert", "not bad"),
        ("equal", "."),
    ]


@given(words, words)
def test_distance_is_zero_iff_tokens_equal(a, b):
    assert (edit_distance(" ".join(a), " ".join(b)) == 0) == (a == b)


@given(texts, texts)
def test_distance_is_symmetric_and_between_zero_and_one(a, b):
    d = edit_distance(a, b)
    assert d == edit_distance(b, a)
    assert 0.0 <= d <= 1.0


@given(texts, texts)
def test_diff_reconstructs_both_texts(a, b):
    ops = word_diff(a, b)
    assert "".join(text for op, text in ops if op != "insert") == a
    assert "".join(text for op, text in ops if op != "delete") == b


@given(words, words)
def test_levenshtein_matches_a_plain_dynamic_program(a, b):
    table = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(
                table[i - 1][j] + 1,
                table[i][j - 1] + 1,
                table[i - 1][j - 1] + (a[i - 1] != b[j - 1]),
            )
    assert levenshtein(a, b) == table[-1][-1]


def test_fields_distance_pools_tokens_of_editable_fields():
    pivot = {"premise": "A dog runs.", "hypothesis": "An animal moves."}
    edited = {"premise": "A dog runs.", "hypothesis": "An animal sleeps."}
    assert fields_edit_distance(pivot, edited, ["hypothesis"]) == 1 / 4
    assert fields_edit_distance(pivot, edited, ["premise", "hypothesis"]) == 1 / 8
    assert tokenize("don't stop!") == ["don", "'", "t", "stop", "!"]


def test_a_binary_editor_opens_with_the_other_label_chosen(project, people):
    """Two labels and edits that must flip them: the intended label is preselected."""
    from django.test import Client

    from annotation.authoring.services.claims import pivot_claim
    from tests.factories import ExampleFactory

    pivot = ExampleFactory(project=project, label="negative")
    pivot_claim(pivot=pivot, expert=people["expert"])
    page = Client()
    page.force_login(people["expert"])
    html = page.get(f"/p/{project.slug}/pivots/{pivot.pk}/edit/").content.decode()
    assert 'value="positive" checked' in html and 'value="negative" checked' not in html


@given(texts, texts)
def test_same_text_is_the_same_text_whitespace_aside(a, b):
    assert same_text(a, b) == (normalize_whitespace(a) == normalize_whitespace(b))
    assert same_text(a, a + " \n") and same_text(a.replace(" ", "\t"), a)
