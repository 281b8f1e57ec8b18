"""The offline API reference: every operation's error responses, Swagger UI and Redoc.

``error_responses`` is a drf-spectacular post-processing hook
(SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]): it gives every ``/v1``
operation its error responses — ``application/problem+json`` with the
``Problem`` schema, one example per code and the codes in the description —
from ``OPERATION_ERRORS`` below. An operation that declares its own (the
preview, api/citations.py) keeps them. An operation missing from the table gets
the errors every authenticated operation of an app can answer, so a new
endpoint is never without its errors in the reference.

The two documentation pages are served from drf-spectacular-sidecar's static
files (no CDN) through templates without any inline script or external URL
(templates/drf_spectacular/); Swagger UI and Redoc set inline styles at run
time, so only those two pages allow ``style-src 'unsafe-inline'``.
"""

from typing import Any

from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from foundation.errors import PROBLEM_MEDIA_TYPE, ErrorCode, ProblemSerializer, SparkTideError

E = ErrorCode

AUTHENTICATED = [
    (401, E.AUTHENTICATION_REQUIRED, "No, a malformed, unknown or revoked bearer token."),
    (
        404,
        E.RESOURCE_NOT_FOUND,
        "No such app or run, or the caller is not a member of the app / the run's owner; "
        "never reveals whether it exists.",
    ),
]
RUN_GONE = (410, E.EVENT_CURSOR_EXPIRED, "The run is archived or older than its retention.")
BAD_REQUEST = (400, E.INVALID_REQUEST, "A malformed body or query parameter.")
APP_NOT_ACTIVE = (403, E.APP_NOT_ACTIVE, "The app is SUSPENDED or DISABLED.")
# What reading a run's history answers besides 401/404 (runs.access.require_run_history,
# in its order): the app ACTIVE, the run within retention, the owner's history permission.
RUN_HISTORY = [
    APP_NOT_ACTIVE,
    RUN_GONE,
    (
        403,
        E.BUSINESS_PERMISSION_DENIED,
        "The owner no longer has the app's business history permission (view_run_history).",
    ),
]

# operationId → the errors it can answer besides the AUTHENTICATED ones.
OPERATION_ERRORS: dict[str, list[tuple[int, ErrorCode, str]]] = {
    "createRun": [
        BAD_REQUEST,
        APP_NOT_ACTIVE,
        (422, E.AGENT_NOT_AVAILABLE, "No such agent is pinned in this app."),
    ],
    "listRuns": [BAD_REQUEST],
    "getRun": [],
    "listRunEvents": [BAD_REQUEST, *RUN_HISTORY],
    "getRunAnswer": RUN_HISTORY,
    "cancelRun": [(409, E.RUN_ALREADY_FINISHED, "The run already ended.")],
    "createEventTicket": RUN_HISTORY,
    "createEvaluation": [
        (
            400,
            E.INVALID_REQUEST,
            "A malformed body, or a bad set: the detail names the key path "
            "(`set: questions[3].key: duplicated key …`), checked before any question runs.",
        ),
        APP_NOT_ACTIVE,
        (
            422,
            E.AGENT_NOT_AVAILABLE,
            "An agent the app does not pin, or an unknown, DRAFT or RETIRED version "
            "(the detail names the item: `agents[1]: …`).",
        ),
    ],
    "getEvaluation": [],
    "listRunFeedback": [],
    "putRunFeedback": [
        (
            400,
            E.INVALID_REQUEST,
            "A malformed body: `rating` not `up` or `down`, `note` longer than 2000 characters, "
            "`block` not an answer block of this run, an unknown field, or NUL / a lone "
            "surrogate in the text (the detail names the field).",
        ),
    ],
}


def errors_of(operation_id: str) -> list[tuple[int, ErrorCode, str]]:
    return [*AUTHENTICATED, *OPERATION_ERRORS.get(operation_id, [BAD_REQUEST])]


def _problem_component() -> dict[str, Any]:
    return {
        "type": "object",
        "description": ProblemSerializer.__doc__,
        "properties": {
            "type": {"type": "string"},
            "title": {"type": "string"},
            "status": {"type": "integer"},
            "code": {"type": "string", "enum": [c.value for c in ErrorCode]},
            "detail": {"type": "string"},
        },
        "required": ["type", "title", "status", "code", "detail"],
    }


def error_responses(
    result: dict[str, Any], generator: object, request: object, public: bool
) -> dict[str, Any]:
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Problem", _problem_component())
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/v1/"):
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            if any(status[0] in "45" for status in responses):
                continue  # the view declared its own errors (the preview)
            by_status: dict[int, list[tuple[ErrorCode, str]]] = {}
            for status, code, when in errors_of(operation["operationId"]):
                by_status.setdefault(status, []).append((code, when))
            for status, entries in sorted(by_status.items()):
                responses[str(status)] = {
                    "description": "; ".join(f"`{code}`: {when}" for code, when in entries),
                    "content": {
                        PROBLEM_MEDIA_TYPE: {
                            "schema": {"$ref": "#/components/schemas/Problem"},
                            "examples": {
                                f"{code}_{status}": {
                                    "summary": str(code),
                                    "description": when,
                                    "value": SparkTideError(code, status).problem(),
                                }
                                for code, when in entries
                            },
                        }
                    },
                }
    return result


# The pages: local scripts only; the UIs' own run-time inline styles allowed.
_DOCS_CSP: dict[str, list[str]] = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "worker-src": [CSP.SELF, "blob:"],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "object-src": [CSP.NONE],
}

swagger_ui = csp_override(_DOCS_CSP)(
    SpectacularSwaggerSplitView.as_view(
        url_name="schema", authentication_classes=[], permission_classes=[]
    )
)
redoc = csp_override(_DOCS_CSP)(
    SpectacularRedocView.as_view(
        url_name="schema", authentication_classes=[], permission_classes=[]
    )
)
