"""A field's value as its kind shows it (docs/task-types.md), for the pages (the `field_html`
and `text_html` filters, `diff_html` for an edit's diff) and the validation API's `fields_html`
alike; and Markdown (guidelines) as safe HTML. The stored text and every export keep the value as
it is: this module only shows it."""

import re
from collections.abc import Iterable

import markdown
import nh3
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from annotation.text.edits import LINE_BREAK


def markdown_html(text: str) -> str:
    """Markdown as sanitised HTML: tables kept, scripts and handlers dropped (nh3)."""
    return mark_safe(nh3.clean(markdown.markdown(text, extensions=["tables", "fenced_code"])))


# What an `html` field may show (MATRES marks its events with coloured <strong> spans).
FIELD_TAGS = {"p", "br", "span", "strong", "b", "em", "i", "u", "mark", "sub", "sup"}
FIELD_STYLES = {"color", "background-color", "font-weight", "font-style", "text-decoration"}


LINE_BREAK_RE = re.compile(LINE_BREAK, re.IGNORECASE)
_BREAK_MARK = "\ue000"  # a private-use character: one character of a truncated text


def text_html(value: str, limit: int = 0) -> SafeString:
    """A `text` field's value (or a part of it) as the pages show it: escaped, every
    `<br>`, `<br/>` or `<br />` (any case) shown as a line break, no other markup run.
    `limit` truncates it as `truncatechars` does, a line break counting one character."""
    marked = LINE_BREAK_RE.sub(_BREAK_MARK, value)
    if limit:
        marked = Truncator(marked).chars(limit)
    return mark_safe(str(conditional_escape(marked)).replace(_BREAK_MARK, "<br>"))


def diff_html(ops: Iterable[tuple[str, str]], limit: int = 0) -> SafeString:
    """A word diff (`edits.word_diff`) as the pages show it: inserted words in `<ins>`, deleted
    in `<del>`, each part's text by `text_html`; an inserted or deleted line break also shows
    a ↵, so that it is seen. `limit` truncates each unchanged part."""
    parts = []
    for op, text in ops:
        if op == "equal":
            parts.append(text_html(text, limit))
            continue
        tag = "ins" if op == "insert" else "del"
        shown = text_html(text).replace("<br>", "↵<br>")
        parts.append(format_html("<{}>{}</{}>", tag, mark_safe(shown), tag))
    return mark_safe("".join(parts))


def field_html(value: str, kind: str = "text") -> str:
    """A field's value as its kind shows it (docs/task-types.md): text by `text_html`, `html`
    sanitised with its marks kept (nh3), `image_url` as the image with its URL (https only)."""
    if kind == "html":
        return mark_safe(
            nh3.clean(
                value,
                tags=FIELD_TAGS,
                attributes={"span": {"style"}},
                filter_style_properties=FIELD_STYLES,
            )
        )
    if kind == "image_url":
        if value.startswith("https://"):
            return format_html(
                '<figure class="field-image"><img src="{}" alt="(the image did not load)" '
                'loading="lazy"><figcaption><a href="{}" rel="noopener noreferrer">{}</a>'
                "</figcaption></figure>",
                value,
                value,
                value,
            )
        return format_html(
            '<span class="field-url">{}</span> <small class="muted">(an image '
            "is shown only from an https address)</small>",
            value,
        )
    return text_html(value)
