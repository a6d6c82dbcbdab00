"""The error answers every endpoint may give, added to the OpenAPI schema (/api/schema/) after
drf-spectacular builds it: each operation's own answers stay, the shared ones are filled in,
with the one error shape of annotation.errors ({"detail", "field"?} or, for a rejected file,
{"errors": [{"line", "message"}]})."""

from typing import Any

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
                "properties": {"line": {"type": "integer", "nullable": True},
                               "message": {"type": "string"}},
            },
        },
    },
}  # fmt: skip
SHARED = {
    "401": "not logged in (no session, token or credentials)",
    "403": "a member who lacks the role this needs",
    "404": "no such object, or one in a project the user has no role in",
    "429": "too many requests: try again after Retry-After",
}
WRITES = {
    "400": "a refused input: the field and why, or a rejected file's lines",
    "409": "a conflict with the object's state (finished, released, already done)",
}
UPLOADS = {
    "413": "the upload is larger than IMPORT_MAX_BYTES",
    "415": "not multipart/form-data",
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
            body = operation.get("requestBody", {}).get("content", {})
            if "multipart/form-data" in body:
                extra |= UPLOADS
            if path.startswith("/api/auth/"):
                extra.pop("403", None)
            for status, description in extra.items():
                answers.setdefault(status, {"description": description, "content": reference})
    return result
