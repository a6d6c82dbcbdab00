from typing import Any

import markdown
import nh3
from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def get_item(mapping: dict[str, Any], key: str) -> Any:
    return mapping.get(key)


@register.filter
def percent(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value * 100:.{digits}f}%"


@register.simple_tag(takes_context=True)
def current(context: Any, names: str) -> str:
    """aria-current="page" on a nav link when the page is one of `names` (URL names)."""
    match = getattr(context.get("request"), "resolver_match", None)
    here = match.url_name if match else None
    return mark_safe(' aria-current="page"') if here in names.split() else ""


@register.filter
def markdown_html(text: str) -> str:
    """Markdown as sanitised HTML: tables kept, scripts and handlers dropped (nh3)."""
    return mark_safe(nh3.clean(markdown.markdown(text, extensions=["tables"])))


@register.filter
def truth(row: Any) -> str:
    """An example's or perturbation's label, or its answers in a free-text project."""
    answers = getattr(row, "answers", None)
    return " · ".join(answers) if answers else getattr(row, "label", "")


@register.filter
def majority(perturbation: Any) -> str:
    """What the validators' majority chose: a label, or the answer of a free-text item."""
    return " · ".join(perturbation.majority_answers) or perturbation.majority_label


@register.simple_tag(takes_context=True)
def sort_header(context: Any, key: str, title: str, numeric: bool = False) -> str:
    """A table header that sorts by `key` (again: the other way), keeping the search."""
    sort = context.get("sort", "")
    query = context["request"].GET.copy()
    query.pop("page", None)
    query["sort"] = f"-{key}" if sort == key else key
    arrow = {key: " ▲", f"-{key}": " ▼"}.get(sort, "")
    state = {key: "ascending", f"-{key}": "descending"}.get(sort, "none")
    return format_html(
        '<th class="{}" aria-sort="{}"><a href="?{}">{}{}</a></th>',
        "num" if numeric else "", state, query.urlencode(), title, arrow,
    )  # fmt: skip
