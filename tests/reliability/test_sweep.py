"""Recovery that runs by itself: the sweep every live worker makes ends stale
RUNNING runs (their task rows settled), re-enqueues QUEUED runs whose task was
lost, recovers each run once however many workers race, and works on SQLite
and PostgreSQL alike."""

import threading
from datetime import timedelta

import pytest
from django.db import connections, transaction
from django.tasks import TaskResultStatus
from django.utils import timezone

from publication.models import AnswerBlock
from runs.lifecycle import claim_run
from runs.models import Run, RunEvent
from runtime import recovery
from runtime.engine import execute_run
from runtime.workers import RunWorker

pytestmark = pytest.mark.django_db(transaction=True)

STALE = timedelta(seconds=30)


def _lost_running_run(make_run, *, silent_for: timedelta = timedelta(minutes=5)) -> Run:
    """A run its worker claimed (task row RUNNING) and then died holding."""
    run = make_run({"text": "never said"})
    task = recovery.run_tasks(run.pk).get()
    task.claim("dead-worker")
    claim_run(run.pk)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - silent_for)
    return run


def test_a_sweep_recovers_a_run_whose_heartbeat_stopped_and_settles_its_task_row(make_run):
    run = _lost_running_run(make_run)

    result = recovery.sweep(STALE)

    run.refresh_from_db()
    assert [r.run_id for r in result.recovered] == [run.pk]
    assert (run.status, run.reason) == (Run.Status.FAILED, recovery.WORKER_LOST)
    task = recovery.run_tasks(run.pk).get()
    assert task.status == TaskResultStatus.FAILED
    assert task.exception_class_path == "runtime.recovery.WorkerLost"
    assert RunEvent.objects.filter(run=run, type="run.failed").count() == 1


def test_a_sweep_leaves_a_run_whose_heartbeat_is_within_the_bound(make_run):
    run = _lost_running_run(make_run, silent_for=timedelta(seconds=5))

    assert recovery.sweep(STALE).recovered == []
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING


def test_a_queued_run_whose_task_row_is_gone_is_re_enqueued_once_and_then_runs(make_run):
    run = make_run({"text": "终于"})
    recovery.run_tasks(run.pk).delete()  # the enqueue lost after the commit
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=1))

    first, second = recovery.sweep(STALE), recovery.sweep(STALE)

    assert first.requeued == [run.pk]
    assert second.requeued == []  # its new task is READY: nothing to do
    assert recovery.run_tasks(run.pk).filter(status=TaskResultStatus.READY).count() == 1
    RunWorker(concurrency=2, batch=True, sweep_seconds=3600).run()
    run.refresh_from_db()
    assert run.status == Run.Status.COMPLETED


def test_a_queued_run_waiting_for_a_busy_worker_is_not_an_orphan(make_run):
    run = make_run({"text": "排队"})
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=1))

    assert recovery.sweep(STALE).requeued == []
    assert recovery.run_tasks(run.pk).count() == 1


def test_a_queued_run_whose_task_a_dead_worker_took_is_re_enqueued(make_run):
    run = make_run({"text": "接手"})
    task = recovery.run_tasks(run.pk).get()
    task.claim("dead-before-claiming-the-run")
    type(task).objects.filter(pk=task.pk).update(started_at=timezone.now() - timedelta(minutes=2))
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=2))

    assert recovery.sweep(STALE).requeued == [run.pk]
    assert recovery.run_tasks(run.pk).get(pk=task.pk).status == TaskResultStatus.FAILED
    assert execute_run(run.pk) == Run.Status.COMPLETED


def test_a_task_row_left_running_after_its_run_ended_is_settled(make_run):
    run = make_run({"text": "完成"})
    task = recovery.run_tasks(run.pk).get()
    task.claim("killed-after-finishing")
    execute_run(run.pk)  # the run ended; the worker died before recording its task
    type(task).objects.filter(pk=task.pk).update(started_at=timezone.now() - timedelta(minutes=2))

    assert recovery.sweep(STALE).settled_tasks == 1
    assert recovery.run_tasks(run.pk).get().status == TaskResultStatus.FAILED
    run.refresh_from_db()
    assert run.status == Run.Status.COMPLETED  # the run's own story is untouched


def test_a_handed_back_run_is_recovered_by_the_next_sweep_without_waiting(make_run):
    run = _lost_running_run(make_run, silent_for=timedelta(seconds=0))
    holder = Run.objects.get(pk=run.pk).worker_id

    assert recovery.hand_back(holder) == 1
    assert [r.run_id for r in recovery.sweep(STALE).recovered] == [run.pk]


@pytest.mark.timing
def test_workers_racing_to_sweep_recover_each_run_once(make_run):
    runs = [_lost_running_run(make_run) for _ in range(6)]
    results, errors = [], []
    barrier = threading.Barrier(4)

    def sweeper():
        try:
            barrier.wait()
            results.append(recovery.sweep(STALE))
        except Exception as exc:  # collected: a thread's failure must fail the test
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=sweeper) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)

    assert errors == []
    recovered = sorted(r.run_id for result in results for r in result.recovered)
    assert recovered == sorted(r.pk for r in runs)
    for run in runs:
        assert RunEvent.objects.filter(run=run, type="run.failed").count() == 1
        assert not AnswerBlock.objects.filter(run=run).exists()


def test_the_sweep_closes_delivery_rows_a_dead_server_left_open_and_only_those(make_run):
    """A daphne SIGKILLed never records its sockets' end: rows of a run that ended longer
    ago than the abandonment bound are closed by the sweep and marked abandoned; a socket
    of a running run, or of a run that has just ended, is a live server's and stays open."""
    from runs.lifecycle import finish_run
    from runs.models import DeliveryLog

    ended_long_ago = make_run({"text": "a"})
    just_ended = make_run({"text": "b"})
    running = make_run({"text": "c"})
    for run in (ended_long_ago, just_ended, running):
        claim_run(run.pk)
    for run in (ended_long_ago, just_ended):
        finish_run(run, Run.Status.COMPLETED, "")
    bound = recovery.abandoned_after()
    Run.objects.filter(pk=ended_long_ago.pk).update(
        completed_at=timezone.now() - bound - timedelta(seconds=1)
    )
    for run in (ended_long_ago, just_ended, running):
        DeliveryLog.objects.create(run=run, connection_id=f"conn_{run.pk}", last_sent_seq=2)
    closed_before = DeliveryLog.objects.create(
        run=ended_long_ago, connection_id="conn_closed", closed_at=timezone.now() - bound * 2
    )

    result = recovery.sweep(STALE)

    assert result.abandoned_deliveries == 1
    rows = {d.connection_id: d for d in DeliveryLog.objects.all()}
    dead = rows[f"conn_{ended_long_ago.pk}"]
    assert dead.abandoned and dead.closed_at is not None and dead.last_sent_seq == 2
    for run in (just_ended, running):
        assert rows[f"conn_{run.pk}"].closed_at is None
        assert not rows[f"conn_{run.pk}"].abandoned
    assert rows["conn_closed"].closed_at == closed_before.closed_at
    assert not rows["conn_closed"].abandoned
    assert recovery.sweep(STALE).abandoned_deliveries == 0  # closed once


def test_a_run_is_claimed_once_under_a_new_epoch_and_the_claim_opens_no_agent_call(make_run):
    """``claim_run`` takes a QUEUED run only (a second claim gets nothing), increments the
    execution epoch by one, and leaves the agent calls to its caller (the engine opens the
    root in ``claim_run_with_root``)."""
    run = make_run({"text": "一次"})

    claimed = claim_run(run.pk)

    assert claimed is not None
    assert (claimed.status, claimed.execution_epoch) == (Run.Status.RUNNING, 1)
    assert not run.agent_calls.exists()
    assert claim_run(run.pk) is None
    assert Run.objects.values_list("execution_epoch", flat=True).get(pk=run.pk) == 1


def test_recovery_takes_a_lost_run_over_under_the_next_epoch_and_fences_the_old_one(make_run):
    """Recovery's takeover moves the epoch on by exactly one, so the execution that lost
    the run is refused at its next write (docs/reliability.md "Fencing"), and the ended run
    takes no write at all."""
    from runs.events import RunEnded, RunFenced
    from runs.lifecycle import lock_for_execution

    run = _lost_running_run(make_run)
    assert Run.objects.values_list("execution_epoch", flat=True).get(pk=run.pk) == 1

    recovery.sweep(STALE)

    assert Run.objects.values_list("execution_epoch", flat=True).get(pk=run.pk) == 2
    with pytest.raises(RunFenced), transaction.atomic():
        lock_for_execution(run.pk, 1)
    # Under its current epoch too, the ended run takes no write.
    with pytest.raises(RunEnded), transaction.atomic():
        lock_for_execution(run.pk, 2)
