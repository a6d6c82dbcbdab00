from typing import Any

import markdown
import nh3
from django import template
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
