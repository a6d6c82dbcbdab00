from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from annotation.models.projects import plain_text
from annotation.notifications import selectors as notification_selectors
from annotation.notifications.selectors import UNREAD_SHOWN_MAX
from annotation.text.answers import answer_text
from annotation.text.fields import diff_html, field_html, markdown_html, text_html

register = template.Library()


@register.filter
def get_item(mapping: dict[str, Any], key: str) -> Any:
    return mapping.get(key)


@register.filter
def percent(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value * 100:.{digits}f}%"


@register.filter
def points(value: float | None, digits: int = 1) -> str:
    """A proportion as percentage points: 0.043 -> "4.3 points"."""
    return "-" if value is None else f"{value * 100:.{digits}f} points"


@register.simple_tag(takes_context=True)
def current(context: Any, names: str) -> str:
    """aria-current="page" on a nav link when the page is one of `names` (URL names)."""
    match = getattr(context.get("request"), "resolver_match", None)
    here = match.url_name if match else None
    return mark_safe(' aria-current="page"') if here in names.split() else ""


register.filter("markdown_html", markdown_html)
register.filter("field_html", field_html)
register.filter("text_html", text_html)
register.filter("diff_html", diff_html)


@register.filter
def plain_fields(fields: dict[str, str], project: Any) -> list[tuple[str, str]]:
    """(name, text) of an example's fields for excerpts: HTML fields without their tags."""
    return [(name, plain_text(value, kind)) for name, value, kind in project.shown_fields(fields)]


@register.filter
def shown_fields(fields: dict[str, str], project: Any) -> list[tuple[str, str, str]]:
    """(name, value, kind) of a row's fields in the project's order, for field_html."""
    return project.shown_fields(fields)


@register.filter
def answers_shown(answers: list[Any]) -> str:
    """Answers for reading: alternatives apart with " · ", a multi-span answer's spans " | ";
    none yet (an original waiting for its answer) said so."""
    return " · ".join(answer_text(a) for a in answers) or "(none yet)"


@register.filter
def truth(row: Any) -> str:
    """An example's or perturbation's label, or its answers in a free-text project."""
    answers = getattr(row, "answers", None)
    return answers_shown(answers) if answers else getattr(row, "label", "")


@register.filter
def majority(perturbation: Any) -> str:
    """What the validators' majority chose: a label, or the answer of a free-text item."""
    answers = perturbation.majority_answers
    return answers_shown(answers) if answers else perturbation.majority_label


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
        "num" if numeric else "",
        state,
        query.urlencode(),
        title,
        arrow,
    )


@register.simple_tag
def unread_notifications(user: Any) -> str:
    """The header's count of the user's unread notifications: "" for none, "99+" past 99."""
    n = notification_selectors.unread_count(user)
    if not n:
        return ""
    return f"{UNREAD_SHOWN_MAX}+" if n > UNREAD_SHOWN_MAX else str(n)
