"""A participant's session reaches their project's validation pages and study pages alone
(docs/security.md): every other page and API answers 404, as for a user with no role."""

import re
from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse

from annotation.crowd.services.studies import PARTICIPANT


def allowed(path: str, slug: str) -> bool:
    """Whether a participant of project `slug` may open `path`: their project's validation and
    study pages, and any study's link itself (whose page asks which participant goes on)."""
    project = re.escape(slug)
    pages = rf"/p/{project}/(validate|study)/|/api/projects/{project}/validation/"
    return bool(re.match(rf"(?:{pages}|{STUDY_LINK}|/accounts/logout/$|/static/)", path))


STUDY_LINK = r"/p/[-\w]+/study/[-\w]+/$"


class ParticipantScope:
    """After the session and authentication middleware: reads the session's participant mark,
    so that other users pay nothing."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        mark = request.session.get(PARTICIPANT)
        if mark and not allowed(request.path, mark["project"]):
            raise Http404("No such page.")
        return self.get_response(request)
