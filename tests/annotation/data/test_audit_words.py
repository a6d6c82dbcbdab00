"""The audit page tells each entry's details in words (issue 59): a change as old → new, a
long list by its length, a mapping as its pairs; never a Python list or dict."""

from annotation.data.audit import details_in_words, in_words
from annotation.models import AuditLog


def test_a_bulk_actions_filters_and_243_ids_read_as_words():
    details = {
        "ids": list(range(1, 244)),
        "filters": {"status": "accepted", "tag": "negation", "author": None},
        "done": 243,
        "clear_votes": False,
    }
    assert details_in_words(details) == [
        "clear_votes: no",
        "done: 243",
        "filters: status: accepted; tag: negation; author: none",
        "ids: 243 items",
    ]


def test_a_change_says_from_what_to_what_and_a_short_list_is_listed():
    details = {
        "settings": {"max_edit_ratio": {"from": 0.5, "to": 0.6}, "lease_ttl": {"from": 600,
                                                                              "to": 900}},
        "labels": {"from": ["negative", "positive"], "to": ["negative", "positive", "mixed"]},
        "added": ["tense"],
    }  # fmt: skip
    assert details_in_words(details) == [
        "added: tense",
        "labels: negative, positive → negative, positive, mixed",
        "max_edit_ratio: 0.5 → 0.6",
        "lease_ttl: 600 → 900",
    ]
    assert in_words("x" * 500) == "x" * 119 + "…"
    assert in_words([]) == in_words(None) == "none"


def test_the_audit_page_shows_the_words_not_the_dump(client, project, people):
    AuditLog.record(actor=people["admin"], action="bulk_accept", project=project,
                    ids=list(range(243)), filters={"status": "disputed"})  # fmt: skip
    client.force_login(people["admin"])
    page = client.get(f"/p/{project.slug}/audit/").content.decode()
    assert "ids: 243 items" in page and "filters: status: disputed" in page
    assert "[0, 1" not in page and "{&#x27;status" not in page
