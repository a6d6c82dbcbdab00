"""The Prompt page (issue 48, item 7): a prompt that repeats a long field over and over shows a
bounded preview of each example, and says when runs would refuse the prompt."""

import pytest
from django.test import Client

from annotation.prompting import MAX_PROMPT
from tests.factories import ExampleFactory

pytestmark = pytest.mark.django_db


def test_a_prompt_over_every_field_renders_a_bounded_page(project, people, settings):
    """A prompt of 3,996 characters, each placeholder the text, made 40 MB of HTML."""
    settings.PROMPT_MAX_CHARS = 500_000
    text = "word " * 600  # 3,000 characters: 2 million for each example through the prompt
    for n in range(3):
        ExampleFactory(project=project, external_id=f"long{n}", fields={"text": text})
    prompt = "{text}" * (MAX_PROMPT // len("{text}"))
    page = Client()
    page.force_login(people["admin"])
    saved = page.post(f"/p/{project.slug}/models/prompt/", {"prompt": prompt})
    assert saved.status_code == 302
    shown = page.get(f"/p/{project.slug}/models/prompt/").content.decode()
    assert len(shown) < 100_000
    assert shown.count("is 1,998,000 characters, above PROMPT_MAX_CHARS (500,000)") == 3
    assert "1,988,000 more characters" in shown


def test_a_prompt_within_the_limits_shows_whole(project, people):
    ExampleFactory(project=project, external_id="short", fields={"text": "a fine film"})
    page = Client()
    page.force_login(people["admin"])
    shown = page.get(f"/p/{project.slug}/models/prompt/").content.decode()
    assert "text: a fine film\nAnswer:" in shown
    assert "more characters" not in shown and "PROMPT_MAX_CHARS" not in shown
