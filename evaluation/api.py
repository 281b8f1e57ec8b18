"""REST views of evaluations (docs/api.md): parse, call one service, render.

The caller is the member the questions run as: the runs are theirs, read with their
authorization, and only they read the evaluation (anyone else gets the 404 a missing
app gets).
"""

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.serializers import StrictSerializer
from citations.access import access_caller
from evaluation.models import Evaluation
from evaluation.service import (
    MAX_AGENTS,
    check_set,
    create_evaluation,
    evaluation_for_owner,
    public_evaluation,
    read_set_file,
)
from runs.access import access_app_for_member

NO_STORE = {"Cache-Control": "no-store"}


class CreateEvaluationInput(StrictSerializer):
    set = serializers.JSONField(
        help_text="An evaluation set: an object as a set file holds it, or the file's text "
        "(YAML or JSON; its mapping keys are then checked for duplicates too)."
    )
    agents = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        default=list,
        max_length=MAX_AGENTS,
        help_text="KEY or KEY@VERSION, at most two; default: the app's pinned agent.",
    )


EvaluationOut = inline_serializer(
    "Evaluation",
    {
        "id": serializers.CharField(),
        "status": serializers.ChoiceField(choices=Evaluation.Status.values),
        "set": inline_serializer(
            "EvaluationSetRef", {"name": serializers.CharField(), "digest": serializers.CharField()}
        ),
        "agents": serializers.ListField(child=serializers.CharField()),
        "progress": inline_serializer(
            "EvaluationProgress",
            {"done": serializers.IntegerField(), "total": serializers.IntegerField()},
        ),
        "createdAt": serializers.DateTimeField(),
        "startedAt": serializers.DateTimeField(allow_null=True),
        "finishedAt": serializers.DateTimeField(allow_null=True),
        "error": serializers.CharField(allow_null=True),
        "summaries": serializers.DictField(help_text="The measures per agent version."),
        "questions": serializers.ListField(
            child=serializers.DictField(), help_text="One row per question and version."
        ),
    },
)


def set_data(value: Any) -> Any:
    """The ``set`` field: an object as is, a text read as a set file's text."""
    return read_set_file(value, "set") if isinstance(value, str) else value


class EvaluationListView(APIView):
    @extend_schema(
        request=CreateEvaluationInput,
        responses={202: EvaluationOut},
        operation_id="createEvaluation",
    )
    def post(self, request: Request, app: str) -> Response:
        caller = access_caller(request.user)
        app_obj = access_app_for_member(caller, app)
        data = CreateEvaluationInput(data=request.data)
        data.is_valid(raise_exception=True)
        evaluation = create_evaluation(
            app=app_obj,
            owner=caller,
            evaluation_set=check_set(set_data(data.validated_data["set"]), "set"),
            agents=data.validated_data["agents"],
            started_by=caller,
            origin=Evaluation.Origin.API,
        )
        return Response(public_evaluation(evaluation), status=status.HTTP_202_ACCEPTED)


class EvaluationDetailView(APIView):
    @extend_schema(responses={200: EvaluationOut}, operation_id="getEvaluation")
    def get(self, request: Request, app: str, evaluation_id: str) -> Response:
        evaluation = evaluation_for_owner(access_caller(request.user), app, evaluation_id)
        return Response(public_evaluation(evaluation), headers=NO_STORE)
