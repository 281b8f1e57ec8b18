"""REST view of the citation preview: parse, call one domain function, render.

Every response of this endpoint — the excerpt and every error, 401 included —
carries ``Cache-Control: no-store``: an excerpt is shown under the owner's
authorization *now*, and no browser or proxy may keep it for later.
"""

from typing import Any

from django.utils.translation import override
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from citations.preview import SCOPE, preview_citation
from foundation.errors import PROBLEM_MEDIA_TYPE, ErrorCode, ProblemSerializer, SparkTideError

NO_STORE = "no-store"


PreviewOut = inline_serializer(
    "CitationPreview",
    {
        "id": serializers.CharField(help_text="The cite_ ID asked for."),
        "knowledgeId": serializers.CharField(),
        "knowledgeVersion": serializers.CharField(),
        "documentId": serializers.CharField(),
        "chunkId": serializers.CharField(),
        "title": serializers.CharField(allow_blank=True),
        "sourceRef": inline_serializer(
            "CitationSourceRef",
            {
                "type": serializers.CharField(),
                "id": serializers.CharField(),
                "version": serializers.CharField(required=False),
                "page": serializers.IntegerField(required=False),
                "locator": inline_serializer(
                    "CitationLocator",
                    {"start": serializers.IntegerField(), "end": serializers.IntegerField()},
                    required=False,
                ),
                "uri": serializers.CharField(
                    required=False, help_text="Data only: never visited, never a trusted link."
                ),
            },
        ),
        "content": serializers.CharField(
            help_text="The excerpt exactly as the model was given it (1–16,384 UTF-16 units)."
        ),
        "scope": serializers.ChoiceField(choices=[SCOPE]),
        "highlights": serializers.ListField(
            child=inline_serializer(
                "CitationHighlight",
                {"start": serializers.IntegerField(), "end": serializers.IntegerField()},
            ),
            required=False,
            help_text="UTF-16 ranges of content that the citing answer quoted or whose figures "
            "it wrote, computed by the server; absent when none is found.",
        ),
        "location": inline_serializer(
            "CitationLocation",
            {
                "page": serializers.IntegerField(required=False),
                "paragraph": serializers.IntegerField(
                    required=False,
                    help_text="1-based non-blank line of the page where the first highlight "
                    "(or the excerpt) begins.",
                ),
            },
            required=False,
        ),
    },
)

# Every error this endpoint answers, with when it happens; each code fixes its status.
PREVIEW_ERRORS: list[tuple[ErrorCode, str]] = [
    (ErrorCode.AUTHENTICATION_REQUIRED, "No, a malformed, unknown or revoked bearer token."),
    (ErrorCode.APP_NOT_ACTIVE, "The app is SUSPENDED or DISABLED."),
    (
        ErrorCode.BUSINESS_PERMISSION_DENIED,
        "The owner no longer holds view_run_history on the app, or left it.",
    ),
    (
        ErrorCode.KNOWLEDGE_ACCESS_DENIED,
        "The owner may no longer read the knowledge or the document (ACL).",
    ),
    (
        ErrorCode.RESOURCE_NOT_FOUND,
        "No such app or run, or the caller is not its owner (an admin is not the owner); "
        "never reveals whether the run exists.",
    ),
    (
        ErrorCode.CITATION_NOT_AVAILABLE,
        "Not a well-formed cite_ ID (a URI, …), not issued by this run, stored without "
        "digest (legacy or archived), or no longer returned by the source / version changed.",
    ),
    (
        ErrorCode.CITATION_PREVIEW_TIMED_OUT,
        "The REMOTE source did not answer within its timeout (at most 15 s).",
    ),
    (ErrorCode.SECURITY_POLICY_CHANGED, "The app's security policy changed since the run."),
    (
        ErrorCode.KNOWLEDGE_ACCESS_CHANGED,
        "The app's knowledge access configuration changed since the run.",
    ),
    (ErrorCode.CAPABILITY_REVOKED, "The exact knowledge version was revoked."),
    (ErrorCode.CITATION_SOURCE_CHANGED, "The re-fetched excerpt's digest differs."),
    (
        ErrorCode.EVENT_CURSOR_EXPIRED,
        "The run is archived or older than the app's retention window.",
    ),
    (
        ErrorCode.KNOWLEDGE_SOURCE_ERROR,
        "The REMOTE source answered an error status or a malformed body.",
    ),
    (
        ErrorCode.CAPABILITY_UNAVAILABLE,
        "The app's lease on the exact version expired, was revoked or is missing.",
    ),
    (ErrorCode.KNOWLEDGE_SOURCE_UNAVAILABLE, "The REMOTE source cannot be reached."),
]


def _error_responses() -> dict[tuple[int, str], OpenApiResponse]:
    by_status: dict[int, list[tuple[ErrorCode, str]]] = {}
    for code, when in PREVIEW_ERRORS:
        by_status.setdefault(code.status, []).append((code, when))
    responses: dict[tuple[int, str], OpenApiResponse] = {}
    for status, entries in sorted(by_status.items()):
        responses[(status, PROBLEM_MEDIA_TYPE)] = OpenApiResponse(
            response=ProblemSerializer,
            description="; ".join(f"`{code}`: {when}" for code, when in entries),
            examples=[
                OpenApiExample(
                    f"{code}_{status}",
                    summary=str(code),
                    description=when,
                    value=_english_problem(code),
                )
                for code, when in entries
            ],
        )
    return responses


def _english_problem(code: ErrorCode) -> dict[str, Any]:
    # The schema is one document for every client: its examples are in English.
    with override("en"):
        return SparkTideError(code).problem()


class CitationPreviewView(APIView):
    # Credentials are the first check of the chain in citations/access.py, so the
    # 401 comes from the same place as every other answer of this endpoint.
    permission_classes: list[Any] = []

    @extend_schema(
        operation_id="previewCitation",
        summary="Re-authorized excerpt of one verified citation",
        description=(
            "Re-checks, in order: credentials → app/run/owner/tenant → app ACTIVE → retention "
            "→ business history permission → policy epochs → citation ID → exact version and "
            "lease → knowledge and document ACL; then re-fetches the excerpt and compares its "
            "digest. No cache, no fallback. Every response carries `Cache-Control: no-store`."
        ),
        parameters=[
            OpenApiParameter("app", str, OpenApiParameter.PATH, description="The app's slug."),
            OpenApiParameter("run_id", str, OpenApiParameter.PATH, description="A run_ ID."),
            OpenApiParameter(
                "citation_id",
                str,
                OpenApiParameter.PATH,
                description="A cite_ ID issued by this run; anything else (a URI, a "
                "Markdown link, another run's ID) is 404 CITATION_NOT_AVAILABLE.",
            ),
            OpenApiParameter(
                "Cache-Control",
                OpenApiTypes.STR,
                location=OpenApiParameter.HEADER,
                response=True,
                description="Always `no-store`, on success and on every error.",
            ),
        ],
        responses={200: PreviewOut, **_error_responses()},
        tags=["citations"],
    )
    def get(self, request: Request, app: str, run_id: str, citation_id: str) -> Response:
        return Response(
            preview_citation(
                user=request.user, app_slug=app, run_id=run_id, citation_id=citation_id
            )
        )

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Cache-Control"] = NO_STORE
        return response
