"""The run lifecycle's own rules (runs/lifecycle.py), each pinned by one test."""

import pytest

from foundation.errors import ErrorCode, SparkTideError
from runs.lifecycle import cancel_run, claim_run, finish_run
from runs.models import Run
from runs.reasons import RunReason

pytestmark = pytest.mark.django_db


def test_a_finished_run_keeps_the_first_2000_characters_of_its_detail(make_run):
    """The stored detail is cut at 2,000 characters: the first 2,000, not one more."""
    run = claim_run(make_run({"text": "x"}, execute=False).pk)
    assert run is not None
    detail = "错" * 1999 + "ab" + "c" * 500

    finish_run(run, Run.Status.FAILED, RunReason.INTERNAL_ERROR, detail)

    stored = Run.objects.get(pk=run.pk).reason_detail
    assert stored == detail[:2000] and len(stored) == 2000 and stored.endswith("错a")


def test_cancelling_a_finished_run_is_run_already_finished(make_run):
    """A run that already ended cannot be cancelled: the error names RUN_ALREADY_FINISHED."""
    run = make_run({"text": "x"}, execute=False)
    finish_run(run, Run.Status.FAILED, RunReason.INTERNAL_ERROR)

    with pytest.raises(SparkTideError) as raised:
        cancel_run(run)

    assert raised.value.code == ErrorCode.RUN_ALREADY_FINISHED


def test_cancelling_a_running_run_records_the_request_its_engine_reads(make_run):
    """A RUNNING run is not ended by the cancel itself: the request is recorded (with
    its time) for the engine's next step boundary, and a second cancel keeps the first."""
    run = claim_run(make_run({"text": "x"}, execute=False).pk)
    assert run is not None

    cancel_run(run)
    first = Run.objects.get(pk=run.pk)
    cancel_run(first)

    again = Run.objects.get(pk=run.pk)
    assert first.status == again.status == Run.Status.RUNNING
    assert first.cancel_requested_at is not None
    assert again.cancel_requested_at == first.cancel_requested_at
