"""Mentions in a comment (`@name`): a name is a mention only when it is a member of the
comment's project; anything else stays plain text."""

import re
from typing import Any

from django.contrib.auth import get_user_model
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from annotation.models import Project
from annotation.text.fields import markdown_html

# `@name` where no word character, @ or / comes before it (an e-mail address or a URL's path).
MENTION = re.compile(r"(?<![\w@/])@([\w.+-]*\w)")
TAG = re.compile(r"(<[^>]*>)")


def mentioned_names(text: str) -> set[str]:
    """The names `text` mentions, lower-case (members or not)."""
    return {name.lower() for name in MENTION.findall(text)}


def mentioned_members(project: Project, text: str) -> list[Any]:
    """The project's members (by username, any case) that `text` mentions."""
    names = mentioned_names(text)
    if not names:
        return []
    users = get_user_model().objects.filter(memberships__project=project).distinct()
    return [user for user in users if user.username.lower() in names]


def comment_html(text: str, members: set[str]) -> SafeString:
    """A comment's Markdown as the guidelines' (sanitised by nh3), each `@name` of a member
    (`members`: lower-case usernames) marked as a mention. Only text between tags is read, and
    code is left as it is."""
    parts = TAG.split(str(markdown_html(text)))
    in_code = 0
    for index, part in enumerate(parts):
        if index % 2:  # a tag
            in_code += part.startswith("<code") - part.startswith("</code")
        elif not in_code:
            parts[index] = MENTION.sub(lambda found: _mention(found, members), part)
    return mark_safe("".join(parts))


def _mention(found: re.Match[str], members: set[str]) -> str:
    name = found.group(1)
    if name.lower() not in members:
        return found.group(0)
    return str(format_html('<span class="mention">@{}</span>', name))
