"""REST views of runs: parse, call one service or selector, render. No rules here."""

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import selectors
from api.serializers import StrictSerializer
from citations.access import access_caller
from delivery.tickets import issue_ticket
from runs.access import access_app_for_member, access_run_for_owner, access_run_history
from runs.lifecycle import cancel_run
from runs.models import Run
from runtime.services import start_run
from tenancy.models import ApiToken

# Revocable bodies (answer text, previews) must not outlive the authorization that
# allowed them in a browser or proxy cache.
NO_STORE = {"Cache-Control": "no-store"}


class CreateRunInput(StrictSerializer):
    agent = serializers.SlugField(max_length=64)
    # Text only here; its rules (not blank, length) are start_run's.
    input = serializers.CharField(trim_whitespace=False, allow_blank=True)
    sessionId = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class RunsQuery(serializers.Serializer[Any]):
    status = serializers.ChoiceField(choices=Run.Status.values, required=False)
    sessionId = serializers.CharField(
        max_length=200, required=False, allow_blank=True, trim_whitespace=False
    )
    createdAfter = serializers.DateTimeField(required=False)
    createdBefore = serializers.DateTimeField(required=False)
    cursor = serializers.CharField(max_length=500, required=False)
    limit = serializers.IntegerField(
        min_value=1, max_value=selectors.MAX_RUNS_PAGE, default=selectors.DEFAULT_RUNS_PAGE
    )
    q = serializers.CharField(max_length=selectors.MAX_QUESTION_QUERY, required=False)
    agent = serializers.SlugField(max_length=64, required=False)
    agentVersion = serializers.CharField(max_length=64, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        after, before = attrs.get("createdAfter"), attrs.get("createdBefore")
        if after is not None and before is not None and after >= before:
            raise serializers.ValidationError({"createdBefore": _("必须晚于 createdAfter。")})
        if "agentVersion" in attrs and "agent" not in attrs:
            raise serializers.ValidationError({"agentVersion": _("只能与 agent 一起使用。")})
        return attrs


class EventsQuery(serializers.Serializer[Any]):
    after = serializers.IntegerField(min_value=0, default=0)
    limit = serializers.IntegerField(min_value=1, max_value=selectors.MAX_EVENTS_PAGE, default=100)


RunOut = inline_serializer(
    "Run",
    {
        "id": serializers.CharField(),
        "status": serializers.CharField(),
        "reason": serializers.CharField(required=False),
        "agent": serializers.CharField(),
        "agentVersion": serializers.CharField(),
        "createdAt": serializers.DateTimeField(),
        "completedAt": serializers.DateTimeField(required=False),
        "sessionId": serializers.CharField(),
        "searches": serializers.ListField(
            child=serializers.DictField(),
            required=False,
            help_text="getRun only: each search_knowledge call (docs/api.md, Run searches)",
        ),
    },
)


RunsPageOut = inline_serializer(
    "RunsPage",
    {
        "runs": inline_serializer(
            "ListedRun",
            {
                "id": serializers.CharField(),
                "status": serializers.ChoiceField(choices=Run.Status.values),
                "agent": serializers.CharField(),
                "agentVersion": serializers.CharField(),
                "sessionId": serializers.CharField(),
                "createdAt": serializers.DateTimeField(),
                "completedAt": serializers.DateTimeField(required=False),
            },
            many=True,
        ),
        "nextCursor": serializers.CharField(
            allow_null=True, help_text="Pass as `cursor` for the next page; null on the last."
        ),
    },
)


class RunListView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=Run.Status.values),
            OpenApiParameter("sessionId", str),
            OpenApiParameter("createdAfter", OpenApiTypes.DATETIME, description="inclusive"),
            OpenApiParameter("createdBefore", OpenApiTypes.DATETIME, description="exclusive"),
            OpenApiParameter("cursor", str, description="`nextCursor` of the previous page"),
            OpenApiParameter("limit", int, description="1–100, default 20"),
            OpenApiParameter(
                "q", str, description="a substring of the question, any case (≤ 200 characters)"
            ),
            OpenApiParameter("agent", str, description="the agent's key"),
            OpenApiParameter("agentVersion", str, description="with `agent`: that version of it"),
        ],
        responses={200: RunsPageOut},
        operation_id="listRuns",
    )
    def get(self, request: Request, app: str) -> Response:
        user = access_caller(request.user)
        app_obj = access_app_for_member(user, app)
        query = RunsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        filters = selectors.RunFilters(
            status=data.get("status", ""),
            session_id=data.get("sessionId"),
            created_after=data.get("createdAfter"),
            created_before=data.get("createdBefore"),
            question=data.get("q", ""),
            agent=data.get("agent", ""),
            agent_version=data.get("agentVersion", ""),
        )
        return Response(
            selectors.runs_page(
                user,
                app_obj,
                filters=filters,
                cursor=data.get("cursor"),
                limit=data["limit"],
            )
        )

    @extend_schema(request=CreateRunInput, responses={201: RunOut}, operation_id="createRun")
    def post(self, request: Request, app: str) -> Response:
        caller = access_caller(request.user)
        app_obj = access_app_for_member(caller, app)
        data = CreateRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        run = start_run(
            user=caller,
            app=app_obj,
            agent_key=data.validated_data["agent"],
            input=data.validated_data["input"],
            session_id=data.validated_data["sessionId"],
        )
        return Response(selectors.public_run(run), status=status.HTTP_201_CREATED)


class RunDetailView(APIView):
    @extend_schema(responses={200: RunOut}, operation_id="getRun")
    def get(self, request: Request, app: str, run_id: str) -> Response:
        run = access_run_for_owner(access_caller(request.user), app, run_id)
        return Response(selectors.run_detail(run))


class RunEventsView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("after", int, description="≥ 0, default 0"),
            OpenApiParameter(
                "limit", int, description=f"1–{selectors.MAX_EVENTS_PAGE}, default 100"
            ),
        ],
        responses={
            200: inline_serializer(
                "EventsPage",
                {
                    "events": serializers.ListField(),
                    "nextAfter": serializers.IntegerField(),
                    "terminal": serializers.BooleanField(),
                    "stream": serializers.ListField(required=False),
                },
            )
        },
        operation_id="listRunEvents",
    )
    def get(self, request: Request, app: str, run_id: str) -> Response:
        run = access_run_history(access_caller(request.user), app, run_id)
        query = EventsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(selectors.events_page(run, **query.validated_data), headers=NO_STORE)


class RunAnswerView(APIView):
    @extend_schema(
        responses={200: inline_serializer("Answer", {"blocks": serializers.ListField()})},
        operation_id="getRunAnswer",
    )
    def get(self, request: Request, app: str, run_id: str) -> Response:
        run = access_run_history(access_caller(request.user), app, run_id)
        return Response(selectors.answer(run), headers=NO_STORE)


class RunCancelView(APIView):
    @extend_schema(request=None, responses={202: None}, operation_id="cancelRun")
    def post(self, request: Request, app: str, run_id: str) -> Response:
        run = access_run_for_owner(access_caller(request.user), app, run_id)
        cancel_run(run)
        return Response(status=status.HTTP_202_ACCEPTED)


class EventTicketView(APIView):
    @extend_schema(
        request=None,
        responses={
            201: inline_serializer(
                "EventTicket",
                {"ticket": serializers.CharField(), "expiresAt": serializers.DateTimeField()},
            )
        },
        operation_id="createEventTicket",
    )
    def post(self, request: Request, app: str, run_id: str) -> Response:
        caller = access_caller(request.user)
        run = access_run_history(caller, app, run_id)
        token = request.auth if isinstance(request.auth, ApiToken) else None  # None: a session
        raw, ticket = issue_ticket(run=run, user=caller, token=token)
        return Response(
            {"ticket": raw, "expiresAt": ticket.expires_at.isoformat()},
            status=status.HTTP_201_CREATED,
        )
