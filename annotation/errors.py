"""Domain errors, and the one place where they become HTTP responses.

Services raise a DomainError with a `code` and a message for people; they know nothing of HTTP.
The API's exception handler (`api_exception_handler`, set in REST_FRAMEWORK) and the pages'
`flash_refusal` turn one into a response; `STATUS` maps each code to its HTTP status; and
`error_answers` writes the answers every endpoint may give into the OpenAPI schema.
"""

import dataclasses
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.http import HttpRequest
from rest_framework.response import Response
from rest_framework.views import exception_handler

STATUS = {
    "invalid": 400,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "throttled": 429,  # too many of something in a while (new participants of a study link)
}


class DomainError(Exception):
    """A request that a rule refused. `field` names the input it concerns, when there is one;
    `details` are extra keys of the API's answer (e.g. the id of a draft that was kept)."""

    def __init__(
        self, message: str, *, code: str = "invalid", field: str | None = None, **details: Any
    ):
        assert code in STATUS, code
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field
        self.details = details

    @property
    def status(self) -> int:
        return STATUS[self.code]

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"detail": self.message, **self.details}
        if self.field:
            body["field"] = self.field
        return body


@dataclass
class LineError:
    """A problem of an uploaded file, on its line (None for the whole file)."""

    line: int | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "message": self.message}


class ImportRejected(DomainError):
    """A file was rejected, with every problem on its line; nothing was imported. Identical
    problems on many lines are reported once, naming the lines."""

    def __init__(self, errors: list[Any]):
        self.errors = group_errors(errors)
        super().__init__("; ".join(f"line {e.line}: {e.message}" for e in self.errors[:5]))

    def as_dict(self) -> dict[str, Any]:
        return {"errors": [e.as_dict() for e in self.errors]}


MAX_REPORTED = 50  # groups of problems reported; the rest are counted in one last entry


def group_errors(errors: list[Any]) -> list[Any]:
    """One entry per distinct message (a LineError or alike), on the first line it occurs on,
    with the exact count: "lines 2, 3, 4, ... (56 lines): unknown label 'Negative'". Past
    MAX_REPORTED entries, one more counts the problems and lines left out."""
    lines: dict[str, list[Any]] = {}
    for error in errors:
        lines.setdefault(error.message, []).append(error)
    grouped = []
    for message, same in lines.items():
        if len(same) == 1:
            grouped.append(same[0])
            continue
        numbers = [str(e.line) for e in same if e.line is not None]
        shown = ", ".join(numbers[:8]) + (", ..." if len(numbers) > 8 else "")
        text = f"lines {shown} ({len(same)} lines): {message}"
        grouped.append(dataclasses.replace(same[0], message=text))
    if len(grouped) > MAX_REPORTED:
        rest = [error for message in list(lines)[MAX_REPORTED:] for error in lines[message]]
        where = len({error.line for error in rest if error.line is not None})
        on = f", on {where} more line{'s' * (where != 1)}" if where else ""
        more = dataclasses.replace(
            rest[0], line=None, message=f"and {len(rest)} more ({len(errors)} in all){on}."
        )
        grouped = [*grouped[:MAX_REPORTED], more]
    return grouped


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response(exc.as_dict(), status=exc.status)
    return exception_handler(exc, context)


def flash_refusal(request: HttpRequest, error: DomainError) -> int:
    """Show a refusal on the next page; returns its HTTP status for pages that render now."""
    messages.error(request, error.message)
    return error.status


# The error answers every endpoint may give, added to the OpenAPI schema (/api/schema/) after
# drf-spectacular builds it: each operation's own answers stay, the shared ones are filled in,
# with the one error shape above ({"detail", "field"?}, or a rejected file's {"errors"}).
ERROR = {
    "type": "object",
    "properties": {
        "detail": {"type": "string"},
        "field": {"type": "string", "description": "the input the refusal concerns"},
        "errors": {
            "type": "array",
            "description": "a rejected file: every problem with its line (null: the file)",
            "items": {
                "type": "object",
                "properties": {
                    "line": {"type": "integer", "nullable": True},
                    "message": {"type": "string"},
                },
            },
        },
    },
}
SHARED = {
    "401": "not logged in (no session, token or credentials)",
    "403": "a member who lacks the role this needs",
    "404": "no such object, or one in a project the user has no role in",
    "429": "too many requests: try again after Retry-After",
}
WRITES = {
    "400": "a refused input: the field and why, or a rejected file's lines (text never holds "
    "NUL, which PostgreSQL cannot store; a file is never empty)",
    "409": "a conflict with the object's state (finished, released, already done)",
}
QUERIES = {"400": "a refused query parameter: the parameter and why"}
UPLOADS = {
    "413": "the upload is larger than IMPORT_MAX_BYTES",
    "415": "not multipart/form-data",
}


# Rules that an operation's 400 applies and its schema cannot state: they depend on what exists
# (an account, an original, a tag) or on the project (its labels, its votes per item), or join
# fields (a release's shares add up to 1). Each is the 400's description, by operation id.
STATE_RULES = {
    "notifications_read_create": "neither `ids` nor `all: true` is given",
    "projects_perturbations_comments_create": "`body` is only white space",
    "projects_perturbations_comments_partial_update": "`body` is only white space",
    "auth_token_create": "the username and password are not an active account's",
    "projects_destroy": "`confirm` is not the project's slug",
    "projects_create": "the configuration breaks a rule across fields (labels, fields, "
    "settings and task type; docs/workflows.md), or another project has the name (whatever "
    "its case)",
    "projects_partial_update": "the configuration breaks a rule across fields (labels, fields, "
    "settings and task type, fixed once examples exist; docs/workflows.md), `slug` differs, or "
    "another project has the name (whatever its case)",
    "projects_members_create": "no account has this username, or it is a study participant's",
    "projects_items_list": "`batch` names no import of the project, or `label`, `tag` or "
    "`author` none of its labels, tags or authors",
    "projects_items_bulk_create": "accept and reject need a reason; tag and untag a tag of the "
    "project; only delete applies to originals; ids or filters are given, one of them",
    "projects_perturbations_create": "`pivot` is no original of the project, or the content "
    "breaks the project's rules (its fields, labels and tags)",
    "projects_perturbations_partial_update": "the content breaks the project's rules (its "
    "fields, labels and tags)",
    "projects_releases_create": "`proportions` do not add up to 1, or a `min_agreement` is "
    "above the project's votes per item",
    "projects_validation_vote_create": "the label is not one of the project's, or the project "
    "takes the other of a label and an answer",
    "projects_validators_create": "no account has this username, or not one of `qualified` and "
    "`action` is given",
    "projects_examples_import_create": "the file is not in the format its name or `format` "
    "says, or its rows break the project's rules: every problem is listed with its line",
    "projects_import_votes_create": "the file is not in the format its name or `format` says, "
    "or its rows break the project's rules: every problem is listed with its line",
    "projects_import_sets_create": "the files that `format` needs are missing, or their rows "
    "break the project's rules: every problem is listed with its line",
    "projects_import_published_create": "the dataset needs another kind of project, or the "
    "files are not the dataset's",
    "import_published_create": "a project has the slug, or the name (whatever its case), or the "
    "files are not the dataset's",
    "models_create": "a transformers model's source is not where a worker can load it from (a "
    "folder of MODELS_DIR without config.json, a hub id neither in the Hugging Face cache nor "
    "on the hub; docs/models.md)",
    "models_check": "the model is not served (only served models are checked)",
    "evaluations_compare_retrieve": "a run has not succeeded, names the same run twice, or the "
    "two runs are not on the same release and split",
    "projects_webhooks_create": "the url's host or port cannot be read (an out-of-range port, "
    "an IPv6 address that is none)",
    "analyses_create": "the analysis needs a release (artifacts, inoculation) or runs "
    "(instability), and the parameters of its kind (docs/analyses.md)",
}


def error_answers(result: dict[str, Any], generator: Any, request: Any, public: bool) -> Any:
    """drf-spectacular postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"])."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR
    reference = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            answers = operation.setdefault("responses", {})
            extra = dict(SHARED)
            if method in ("post", "put", "patch", "delete"):
                extra |= WRITES
            elif any(p.get("in") == "query" for p in operation.get("parameters", [])):
                extra |= QUERIES
            body = operation.get("requestBody", {}).get("content", {})
            if "multipart/form-data" in body:
                extra |= UPLOADS
            if path.startswith("/api/auth/"):
                extra.pop("403", None)
            for status, description in extra.items():
                answers.setdefault(status, {"description": description, "content": reference})
            rule = STATE_RULES.get(operation.get("operationId", ""))
            if rule:
                answers["400"]["description"] += f"; also when {rule}"
    return result
