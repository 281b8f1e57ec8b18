"""SIGTERM drains a worker: it stops claiming, lets in-flight runs finish within
its grace period, and hands back what it still holds so another worker's next
sweep recovers it at once."""

import signal

import pytest

from runs.models import Run
from runtime import recovery
from tests.reliability.support import Worker, reliability_env, statuses, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _running(run) -> bool:
    return statuses([run.pk])[run.pk] == "RUNNING"


def test_sigterm_lets_the_runs_in_flight_finish_and_claims_no_new_one(postgres, make_run):
    in_flight = make_run({"sleep": 2.0}, {"text": "做完"})
    worker = Worker(reliability_env(), args=("--concurrency", "2", "--grace", "30"))
    try:
        wait_for(lambda: _running(in_flight), timeout=30, what="the run to start")
        worker.popen.send_signal(signal.SIGTERM)
        later = make_run({"text": "不该被领取"})
        assert worker.wait(30) == 0, worker.output()
    finally:
        output = worker.output()
        worker.stop()
    assert statuses([in_flight.pk, later.pk]) == {
        in_flight.pk: "COMPLETED",
        later.pk: "QUEUED",
    }, output


def test_a_run_still_in_flight_after_the_grace_period_is_handed_back_and_recovered_at_once(
    postgres, make_run
):
    stuck = make_run({"sleep": 20.0}, {"text": "来不及"})
    env = reliability_env(SPARKTIDE_STALE_AFTER_SECONDS="600")  # only a hand-back recovers it
    leaving = Worker(env, args=("--grace", "0.5"))
    try:
        wait_for(lambda: _running(stuck), timeout=30, what="the run to start")
        leaving.popen.send_signal(signal.SIGTERM)
        assert leaving.wait(20) == 0, leaving.output()
    finally:
        leaving.stop()
    assert Run.objects.get(pk=stuck.pk).heartbeat_at == recovery.HANDED_BACK

    successor = Worker(env)
    try:
        wait_for(lambda: statuses([stuck.pk])[stuck.pk] == "FAILED", timeout=20, what="recovery")
    finally:
        successor.stop()
    assert Run.objects.get(pk=stuck.pk).reason == recovery.WORKER_LOST
