"""A field's value as its kind shows it (docs/task-types.md), for the pages (the `field_html`
filter) and the validation API's `fields_html` alike; and Markdown (guidelines) as safe HTML."""

import markdown
import nh3
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe


def markdown_html(text: str) -> str:
    """Markdown as sanitised HTML: tables kept, scripts and handlers dropped (nh3)."""
    return mark_safe(nh3.clean(markdown.markdown(text, extensions=["tables", "fenced_code"])))


# What an `html` field may show (MATRES marks its events with coloured <strong> spans).
FIELD_TAGS = {"p", "br", "span", "strong", "b", "em", "i", "u", "mark", "sub", "sup"}
FIELD_STYLES = {"color", "background-color", "font-weight", "font-style", "text-decoration"}


def field_html(value: str, kind: str = "text") -> str:
    """A field's value as its kind shows it (docs/task-types.md): text escaped, `html` sanitised
    with its marks kept (nh3), `image_url` as the image with its URL (https only)."""
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
    return conditional_escape(value)
