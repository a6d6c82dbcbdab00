"""The one cancel/retry API view of every kind of job (an import, a run, an analysis), as
`pages.py` holds the one page action. A kind's subclass says how to find one of its jobs for
the user who asks, what may be done to it, and how it is answered; its route stays its own
(`…/imports/{pk}/{action}/` under a project, `/api/evaluations/{pk}/cancel/`, …)."""

from collections.abc import Callable, Mapping
from typing import Any

from django.http import Http404
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

REFUSED = OpenApiResponse(
    description="cancel: it has finished; retry: it succeeded (or, for an import, its files are "
    "gone); the reason in `detail`"
)


class JobActionSchema(AutoSchema):
    """No request body; the kind's serializer, or the refusal."""

    def get_request_serializer(self) -> Any:
        return None

    def get_response_serializers(self) -> Any:
        view: Any = self.view
        return {200: view.output, 409: REFUSED}


class JobActionView(APIView):
    """Cancel a queued or running job (nothing of it is committed), or retry a failed or
    cancelled one, its attempts counted afresh."""

    # `find(user, **route)` loads the job and refuses (404, or the project's refusal) anyone who
    # may not act on it. It runs first: the action named is looked at only for someone who may.
    # `actions` are the kind's services by name; a route made for one action gives `action`
    # (`as_view(action="cancel")`), the others take it from the URL.
    find: Callable[..., Any]
    actions: Mapping[str, Callable[[Any], Any]]
    output: type[Serializer]
    action = ""
    schema = JobActionSchema()

    def post(self, request: Request, **route: Any) -> Response:
        action = route.pop("action", self.action)
        job = type(self).find(request.user, **route)
        act = self.actions.get(action)
        if act is None:
            raise Http404("The actions are cancel and retry.")
        return Response(self.output(act(job)).data)
