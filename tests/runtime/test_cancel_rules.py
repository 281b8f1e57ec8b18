"""Cancelling is one run's business (runs/lifecycle.py ``cancel_run``): found as a mutant
that the lifecycle tests let through once mutation runs stopped counting false kills."""

import pytest

from runs.lifecycle import cancel_run, claim_run
from runs.models import Run

pytestmark = pytest.mark.django_db


def test_cancelling_a_run_records_no_request_on_any_other_run(make_run):
    running = claim_run(make_run({"text": "x"}, execute=False, key="first").pk)
    other = claim_run(make_run({"text": "y"}, execute=False, key="second").pk)
    queued = make_run({"text": "z"}, execute=False, key="third")
    assert running is not None and other is not None

    cancel_run(running)

    assert Run.objects.get(pk=running.pk).cancel_requested_at is not None
    assert Run.objects.get(pk=other.pk).cancel_requested_at is None
    assert Run.objects.get(pk=other.pk).status == Run.Status.RUNNING
    assert Run.objects.get(pk=queued.pk).cancel_requested_at is None
    assert Run.objects.get(pk=queued.pk).status == Run.Status.QUEUED
