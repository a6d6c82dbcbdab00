"""Checks at the edge, before any view runs: what no endpoint or page may receive.

PostgreSQL refuses NUL characters in text and integers past its range, and Python's JSON reader
accepts NaN and recurses on deep nesting; each would otherwise surface as a 500. These checks
turn them into a clear 4xx (JSON for the API) before a view looks at the payload.
"""

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.views import defaults
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from annotation.text.parsing import strict_json_loads


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return strict_json_loads(stream.read().decode(encoding))
        except (ValueError, UnicodeDecodeError) as error:
            raise ParseError(f"JSON parse error - {error}") from None


# Where the edge leaves the client's address for the views (client_address, below): a key no
# request header can write (those are HTTP_*).
CLIENT_ADDRESS = "CONTRASTLAB_CLIENT_ADDRESS"


class EdgeMiddleware:
    """Refuses NUL characters in the path, the query string and form fields, and request bodies
    over the limits, with JSON for the API and a plain 400 page elsewhere; leaves the client's
    address in request.META[CLIENT_ADDRESS] for the views that count by it (study links)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.META[CLIENT_ADDRESS] = client_address(request) or ""
        problem = self._problem(request)
        if problem is not None:
            status, message = problem
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=status)
            return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    def _problem(self, request: HttpRequest) -> tuple[int, str] | None:
        if "\x00" in request.path or "\x00" in unquote(request.META.get("QUERY_STRING", "")):
            return 400, "The address may not contain NUL characters (%00)."
        size = _content_length(request)
        multipart = request.content_type == "multipart/form-data"
        limit = settings.IMPORT_MAX_BYTES + 1024 * 1024 if multipart else _body_limit()
        if size > limit:
            return 413, f"The request body is {_mb(size)}; the limit is {_mb(limit)}."
        if request.method == "POST" and request.content_type in (
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ):
            try:
                fields = request.POST
            except Exception:  # Django's parsers raise several kinds on malformed bodies
                return 400, "The form data is malformed."
            values = [v for key in fields for v in [key, *fields.getlist(key)]]
            if any("\x00" in value for value in values):
                return 400, "Form fields may not contain NUL characters."
        return None


def _content_length(request: HttpRequest) -> int:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0


def _body_limit() -> int:
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 2**62


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


# Django's own answers for errors no view handled (handler400 and the rest, in config.urls):
# JSON under /api/, whatever the status, so that API clients never have to parse a page.
def _api_error(request: HttpRequest, status: int, detail: str) -> HttpResponse | None:
    return (
        JsonResponse({"detail": detail}, status=status)
        if request.path.startswith("/api/")
        else None
    )


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _api_error(request, 400, "Bad request.") or defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _api_error(request, 403, "You do not have permission to do this.") or (
        defaults.permission_denied(request, exception)
    )


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _api_error(request, 404, "Not found.") or defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    detail = (
        "The server failed to complete the request (for example, the database was restarting). "
        "Retry it: a vote that was stored is answered as already stored (docs/api.md)."
    )
    return _api_error(request, 500, detail) or defaults.server_error(request)


class ContentSecurityPolicyMiddleware:
    """Sends CONTENT_SECURITY_POLICY with every response: a script that escaped the escaping
    would still not run, since pages load scripts only from our static files."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


def with_inline_styles(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The policy with inline <style> elements allowed, for a vendored page that injects them
    (Swagger UI); its scripts stay restricted to our own files."""

    def allowing(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response["Content-Security-Policy"] = settings.CONTENT_SECURITY_POLICY.replace(
            "style-src 'self'", "style-src 'self' 'unsafe-inline'", 1
        )
        return response

    return allowing


def client_address(request: HttpRequest) -> str | None:
    """The client's address: behind proxies, the entry that the nearest trusted one added to
    CLIENT_ADDRESS_HEADER (a client may write anything before it); else the connection's."""
    header = settings.CLIENT_ADDRESS_HEADER
    addresses = [a.strip() for a in request.META.get(header, "").split(",") if a.strip()]
    if header and len(addresses) >= settings.TRUSTED_PROXY_COUNT:
        return addresses[-settings.TRUSTED_PROXY_COUNT]
    return request.META.get("REMOTE_ADDR")
