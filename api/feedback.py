"""REST view of a run's feedback: parse, call feedback.service, render. No rules here."""

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.serializers import StrictSerializer
from citations.access import access_caller
from feedback.models import MAX_NOTE, Feedback
from feedback.service import give_feedback, public_feedback, run_feedback
from runs.access import access_run_for_owner


class FeedbackInput(StrictSerializer):
    rating = serializers.ChoiceField(choices=Feedback.Rating.values)
    note = serializers.CharField(
        max_length=MAX_NOTE, required=False, allow_blank=True, trim_whitespace=False, default=""
    )
    block = serializers.CharField(
        max_length=40,
        required=False,
        allow_null=True,
        default=None,
        help_text="An answer block ID of this run (getRunAnswer); omitted or null: the whole run.",
    )


@extend_schema_serializer(component_name="Feedback")
class FeedbackOut(serializers.Serializer[Any]):
    rating = serializers.ChoiceField(choices=Feedback.Rating.values, help_text="👍 up, 👎 down")
    note = serializers.CharField()
    block = serializers.CharField(allow_null=True, help_text="The answer block, null: the run")
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()


class RunFeedbackView(APIView):
    @extend_schema(
        responses={200: inline_serializer("FeedbackList", {"feedback": FeedbackOut(many=True)})},
        operation_id="listRunFeedback",
    )
    def get(self, request: Request, app: str, run_id: str) -> Response:
        run = access_run_for_owner(access_caller(request.user), app, run_id)
        return Response({"feedback": [public_feedback(item) for item in run_feedback(run)]})

    @extend_schema(
        request=FeedbackInput, responses={200: FeedbackOut}, operation_id="putRunFeedback"
    )
    def put(self, request: Request, app: str, run_id: str) -> Response:
        caller = access_caller(request.user)
        run = access_run_for_owner(caller, app, run_id)
        data = FeedbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        item = give_feedback(
            run,
            owner=caller,
            rating=data.validated_data["rating"],
            note=data.validated_data["note"],
            block_id=data.validated_data["block"],
        )
        return Response(public_feedback(item))
