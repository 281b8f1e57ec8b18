"""On PostgreSQL an idle worker wakes at once when a run is enqueued (NOTIFY on
commit, LISTEN on the worker's own connection), long before its poll interval."""

import threading
import time

import pytest
from django.db import connection

from runs.models import Run
from runtime.workers import RunWorker
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

POLL = 30.0


@pytest.fixture
def idle_worker():
    worker = RunWorker(concurrency=1, interval=POLL, sweep_seconds=3600)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    assert worker.listening.wait(10), "the listener never LISTENed"
    time.sleep(0.3)  # the loop's first poll is done: it now waits POLL seconds
    yield worker
    worker.stop()
    thread.join(15)
    assert not thread.is_alive()


def _wait_for(run_id, seconds: float) -> Run:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run = Run.objects.get(pk=run_id)
        if run.status == Run.Status.COMPLETED:
            return run
        time.sleep(0.05)
    return Run.objects.get(pk=run_id)


@pytest.mark.postgres(reason="LISTEN/NOTIFY is PostgreSQL's")
def test_a_worker_polling_every_30_s_picks_a_new_run_up_at_once(idle_worker, app, alice, knowledge):
    started = time.monotonic()
    run = factories.scripted_run(
        app, alice, [{"text": "即刻"}], knowledge=[knowledge], execute=False
    )

    assert _wait_for(run.pk, 5.0).status == Run.Status.COMPLETED
    assert time.monotonic() - started < POLL / 6


@pytest.mark.postgres(reason="LISTEN/NOTIFY is PostgreSQL's")
def test_the_listener_ends_with_the_worker(idle_worker):
    idle_worker.stop()
    idle_worker.listener.join(5)

    assert not idle_worker.listener.is_alive()


@pytest.mark.postgres(
    reason="FOR UPDATE SKIP LOCKED: SQLite has no row locks, its writers queue on the database"
)
def test_a_worker_claims_as_many_ready_runs_as_it_has_free_slots_in_one_locking_query(
    app, alice, knowledge
):
    from django.test.utils import CaptureQueriesContext

    from runtime.services import start_run

    first = factories.scripted_run(
        app, alice, [{"text": "批量"}], knowledge=[knowledge], execute=False
    )
    more = [start_run(user=alice, app=app, agent_key="researcher", input="再来") for _ in range(2)]
    runs = [first, *more]
    worker = RunWorker(concurrency=4, interval=0.05, sweep_seconds=3600, batch=True)
    with CaptureQueriesContext(connection) as queries:
        assert worker._claim_and_submit() is True
    locking = [q["sql"] for q in queries.captured_queries if "FOR UPDATE" in q["sql"]]
    assert len(locking) == 1, locking
    assert worker.in_flight == 3
    assert worker.run() == "batch done"  # the claimed three finish; nothing is left to claim
    assert {_wait_for(run.pk, 10).status for run in runs} == {Run.Status.COMPLETED}
