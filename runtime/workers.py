"""The task worker: many runs at once per process, recovery that runs by itself.

One ``RunWorker`` is the body of ``manage.py run_worker`` and of the embedded
in-process worker (a thread beside the ASGI server when
SPARKTIDE_INPROCESS_WORKER is on, the demo). It

* claims django_tasks_db task rows — as many as it has free slots, in one
  transaction (``SPARKTIDE_WORKER_CONCURRENCY`` threads) — and runs each in a thread of its
  pool; each thread closes its database connections after each task, so a
  worker holds at most concurrency + 3 connections (claim loop, heartbeats,
  the listener);
* wakes at once when a run is enqueued on PostgreSQL: a listener thread holds one
  dedicated connection LISTENing on ``tasks.RUNS_CHANNEL`` (one NOTIFY per enqueued
  run, on commit) and cuts the poll's wait short; the poll stays, as the fallback
  (a lost connection, SQLite, a NOTIFY missed while reconnecting);
* sweeps every ``SPARKTIDE_SWEEP_SECONDS`` (runtime/recovery.py ``sweep``):
  stale RUNNING runs recovered, their task rows settled, orphaned QUEUED runs
  re-enqueued;
* never dies of a database error: an OperationalError / InterfaceError in the
  claim loop or the sweep closes this thread's connections, backs off briefly
  (up to 5 s) and goes on; a run whose own execution died of one is recovered
  at once (WORKER_LOST) and its task recorded as failed;
* stops cleanly: ``stop()`` (SIGTERM/SIGINT in run_worker) stops claiming, lets
  in-flight runs finish within ``SPARKTIDE_WORKER_GRACE_SECONDS``, then hands
  back what it still holds (``recovery.hand_back``: the next sweep of any
  worker recovers them at once).

Why not django_tasks_db's own ``Worker``: it runs one task at a time in its
loop and exits on any database error that is not a lock. This worker builds on
its public pieces instead — ``DBTaskResult.objects.ready().get_locked()``
(SELECT … FOR UPDATE SKIP LOCKED) inside ``exclusive_transaction``,
``DBTaskResult.claim`` / ``set_successful`` / ``set_failed`` and the
``task_started`` / ``task_finished`` signals — so rows, statuses and the admin
mean exactly what they mean under ``db_worker``.
"""

import logging
import os
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connections, transaction
from django.tasks import TaskResultStatus
from django_tasks_db.compat import task_finished, task_started
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction

from runs import heartbeats
from runs.events import RunFenced
from runs.lifecycle import worker_identity
from runtime import recovery

logger = logging.getLogger(__name__)

CONNECTION_ERRORS = (OperationalError, InterfaceError)
MAX_BACKOFF = 5.0


def _close_connections(*, after_error: bool = False) -> None:
    """Close this thread's connections (a pooled one goes back to the pool; a
    broken one is discarded), whatever state they are in.

    After a connection error, the pool's idle connections are checked at once:
    a failover or restart kills them all, and discarding them here spares every
    later checkout a dead connection (and psycopg_pool's back-off between them).
    """
    for conn in connections.all(initialized_only=True):
        try:
            conn.close()
        except Exception:  # a broken connection may fail to close: it is gone either way
            conn.connection = None
        pool = getattr(conn, "_connection_pools", {}).get(conn.alias) if after_error else None
        if pool is not None:
            try:
                pool.check()
            except Exception as exc:  # the database is still away: the back-off goes on
                logger.debug("pool check failed: %s", exc)


def _retrying[T](action: Callable[[], T], *, what: str, attempts: int = 20) -> T | None:
    """Run a small database action until it succeeds, reconnecting after each
    connection error (bounded: about a minute)."""
    delay = 0.1
    for attempt in range(attempts):
        try:
            return action()
        except CONNECTION_ERRORS as exc:
            _close_connections(after_error=True)
            if attempt == attempts - 1:
                raise
            logger.warning("%s: database unavailable (%s); retrying", what, _one_line(exc))
            time.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)
    return None


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def _record_task(db_task: DBTaskResult[Any, Any], value: Any, error: BaseException | None) -> bool:
    """Record how the task ended — only while its row is still RUNNING, under the row's
    lock. A row recovery already settled (FAILED, ``WorkerLost``: this worker was
    paused past the stale bound) is never turned into a success, nor rewritten."""
    with transaction.atomic(using=db_task._state.db):
        status = (
            DBTaskResult.objects.select_for_update()
            .filter(pk=db_task.pk)
            .values_list("status", flat=True)
            .first()
        )
        if status != TaskResultStatus.RUNNING:
            logger.info("task %s is %s already: left as it is", db_task.id, status)
            return False
        if error is None:
            db_task.set_successful(value)
        else:
            db_task.set_failed(error)
    return True


class RunWorker:
    def __init__(
        self,
        *,
        concurrency: int | None = None,
        interval: float = 0.2,
        sweep_seconds: float | None = None,
        stale_after: float | None = None,
        grace_seconds: float | None = None,
        batch: bool = False,
        startup_delay: bool = False,
        backend_name: str = "default",
        worker_id: str | None = None,
    ) -> None:
        self.concurrency = concurrency or settings.SPARKTIDE_WORKER_CONCURRENCY
        self.interval = interval
        self.sweep_seconds = (
            settings.SPARKTIDE_SWEEP_SECONDS if sweep_seconds is None else sweep_seconds
        )
        self.stale_after = timedelta(
            seconds=settings.SPARKTIDE_STALE_AFTER_SECONDS if stale_after is None else stale_after
        )
        self.grace_seconds = (
            settings.SPARKTIDE_WORKER_GRACE_SECONDS if grace_seconds is None else grace_seconds
        )
        self.batch = batch
        self.startup_delay = startup_delay
        self.backend_name = backend_name
        # Runs carry the process identity (runs.lifecycle); task rows carry this.
        self.worker_id = (worker_id or worker_identity())[:64]
        self.stopping = threading.Event()
        self.slots = threading.BoundedSemaphore(self.concurrency)
        self.in_flight = 0
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)
        self.executor = ThreadPoolExecutor(
            max_workers=self.concurrency, thread_name_prefix="sparktide-run"
        )
        self.next_sweep = 0.0
        # Until then stale runs are not recovered: this worker has just been out
        # of touch with the database, and so, likely, have the others (_maybe_sweep).
        self.recovery_held_until = 0.0
        self.unfinished = 0
        # Set by the listener on a NOTIFY, and by stop(): the idle wait ends at once.
        self.wake = threading.Event()
        self.listener: threading.Thread | None = None
        self.listening = threading.Event()  # set while the listener holds its LISTEN

    # -- the loop ----------------------------------------------------------------

    def run(self) -> str:
        """Work until stopped (or, with batch, until the queue is empty and every
        claimed run has finished). Returns why it ended."""
        logger.info(
            "worker %s: %d run(s) at once, sweep every %.1f s, stale after %.1f s",
            self.worker_id,
            self.concurrency,
            self.sweep_seconds,
            self.stale_after.total_seconds(),
        )
        if self.startup_delay:
            time.sleep(random.random())  # noqa: S311 — spread a fleet's first polls
        backoff = 0.0
        self._start_listener()
        try:
            while not self.stopping.is_set():
                try:
                    self._maybe_sweep()
                    claimed = self._claim_and_submit()
                    backoff = 0.0
                except CONNECTION_ERRORS as exc:
                    _close_connections(after_error=True)
                    backoff = min(max(backoff * 2, 0.1), MAX_BACKOFF)
                    logger.warning(
                        "worker %s: database unavailable (%s); retrying in %.1f s",
                        self.worker_id,
                        _one_line(exc),
                        backoff,
                    )
                    self.stopping.wait(backoff)
                    continue
                if claimed is None:  # no free slot: wait for a run to end
                    self._wait_for_slot()
                elif not claimed:
                    if self.batch and self.in_flight == 0:
                        return "batch done"
                    self.wake.wait(self.interval)
                    self.wake.clear()
            return "stopped"
        finally:
            _close_connections()
            self._drain()

    def stop(self) -> None:
        """Stop claiming; in-flight runs get the grace period (see _drain)."""
        self.stopping.set()
        self.wake.set()
        with self.lock:
            self.idle.notify_all()

    # -- waking on NOTIFY --------------------------------------------------------

    def _start_listener(self) -> None:
        if self.batch or connections[DBTaskResult.objects.db].vendor != "postgresql":
            return
        params = {
            key: value
            for key, value in connections[DBTaskResult.objects.db].get_connection_params().items()
            if key not in ("cursor_factory", "context", "prepare_threshold")
        }
        self.listener = threading.Thread(
            target=self._listen, args=(params,), name="sparktide-run-listener", daemon=True
        )
        self.listener.start()

    def _listen(self, params: dict[str, Any]) -> None:
        """LISTEN on a connection of its own (not Django's: autocommit, never pooled)
        and set ``wake`` on each notification; reconnect with a back-off."""
        import psycopg

        from runtime.tasks import RUNS_CHANNEL

        backoff = 0.0
        while not self.stopping.is_set():
            try:
                with psycopg.connect(**params, autocommit=True) as conn:
                    conn.execute(f"LISTEN {RUNS_CHANNEL}")
                    backoff = 0.0
                    self.listening.set()
                    self.wake.set()  # a run enqueued while not listening is claimed now
                    while not self.stopping.is_set():
                        for _ in conn.notifies(timeout=1.0, stop_after=1):
                            self.wake.set()
            except psycopg.Error as exc:
                self.listening.clear()
                backoff = min(max(backoff * 2, 0.5), MAX_BACKOFF)
                logger.warning(
                    "worker %s: run listener lost its connection (%s); polling meanwhile",
                    self.worker_id,
                    _one_line(exc),
                )
                self.stopping.wait(backoff)

    # -- claiming ----------------------------------------------------------------

    def _maybe_sweep(self) -> None:
        now = time.monotonic()
        if now < self.next_sweep:
            return
        late = self.next_sweep and now - self.next_sweep > self.sweep_seconds
        self.next_sweep = now + self.sweep_seconds
        heartbeats.beat(self.worker_id)
        stale_after = self.stale_after
        if late or time.monotonic() - now > self.sweep_seconds:
            # This sweep comes a whole interval late, or its beat waited that long for a
            # connection: the database was out of reach. Runs whose workers could not
            # beat meanwhile are not lost; the outage is given back to them: no run is
            # taken as stale until every live worker has had a full window to beat again.
            self.recovery_held_until = time.monotonic() + stale_after.total_seconds()
        if self.recovery_held_until > time.monotonic():
            # Held: no sweep at all. Lengthening the stale bound by what is left of the
            # hold is not enough — every beat is older by the whole outage, which this
            # worker cannot measure (measured: 2-3 live runs of 6 taken after 8 s).
            return
        try:
            result = recovery.sweep(stale_after)
        except CONNECTION_ERRORS:
            raise
        except Exception:  # a bug in the sweep must not stop the worker running runs
            logger.exception("worker %s: recovery sweep failed", self.worker_id)
            return
        for r in result.recovered:
            logger.warning("recovered %s: %s (%s)", r.run_id, r.status, recovery.WORKER_LOST)
        for run_id in result.requeued:
            logger.warning("re-enqueued %s: its task was lost", run_id)
        if result.abandoned_deliveries:
            logger.warning(
                "closed %d delivery record(s) of a server that died", result.abandoned_deliveries
            )

    def _claim_and_submit(self) -> bool | None:
        """Claim as many ready tasks as there are free slots, in one transaction
        (one SELECT … FOR UPDATE SKIP LOCKED, oldest first), and start them.
        None: no free slot; False: no task."""
        free = 0
        while free < self.concurrency and self.slots.acquire(blocking=False):
            free += 1
        if not free:
            return None
        claimed: list[DBTaskResult[Any, Any]] = []
        try:
            tasks = DBTaskResult.objects.ready().filter(backend_name=self.backend_name)
            with exclusive_transaction(tasks.db):
                claimed = list(tasks.select_for_update(skip_locked=True)[:free])
                for task in claimed:
                    task.claim(self.worker_id)
        except OperationalError as exc:
            self._release_slots(free)
            if "is locked" in str(exc).lower():  # SQLite busy: try again next poll
                return False
            raise
        except BaseException:
            self._release_slots(free)
            raise
        self._release_slots(free - len(claimed))
        if not claimed:
            return False
        with self.lock:
            self.in_flight += len(claimed)
        for task in claimed:
            self.executor.submit(self._execute, task)
        return True

    def _release_slots(self, count: int) -> None:
        for _ in range(count):
            self.slots.release()

    def _wait_for_slot(self) -> None:
        with self.lock:
            if self.in_flight >= self.concurrency and not self.stopping.is_set():
                self.idle.wait(timeout=max(self.interval, 0.05) * 5)

    # -- one task, in a pool thread -------------------------------------------------

    def _execute(self, db_task: DBTaskResult[Any, Any]) -> None:
        run_id, result = None, None
        try:
            error: BaseException | None
            value, error, lost_database, fenced = None, None, False, False
            try:
                task = db_task.task
                result = db_task.task_result
                if db_task.task_path == recovery.RUN_TASK_PATH and result.args:
                    run_id = result.args[0]
                task_started.send(sender=type(task.get_backend()), task_result=result)
                value = task.call(*result.args, **result.kwargs)
            except RunFenced:
                # The run was taken over (recovered as WORKER_LOST): the engine logged it;
                # the task tells recovery's story, never this execution's.
                fenced = True
            except CONNECTION_ERRORS as exc:
                error, lost_database = exc, True
                logger.warning(
                    "worker %s: run %s lost its database connection (%s)",
                    self.worker_id,
                    run_id,
                    _one_line(exc),
                )
            except BaseException as exc:  # recorded on the task row, as db_worker does
                error = exc
            finally:
                _close_connections(after_error=lost_database)
            if lost_database and run_id:
                _retrying(
                    lambda: recovery.settle_interrupted_run(run_id), what=f"recovering {run_id}"
                )
            if fenced and run_id:
                _retrying(lambda: recovery.settle_run_tasks(run_id), what=f"task {db_task.id}")
                return
            recorded = _retrying(
                lambda: _record_task(db_task, value, error), what=f"task {db_task.id}"
            )
            if result is not None and recorded:
                task_finished.send(sender=type(db_task.task.get_backend()), task_result=result)
        except Exception:
            # The run itself is safe (recovery ends it if it was left RUNNING);
            # the worker goes on.
            logger.exception("worker %s: task %s could not be recorded", self.worker_id, db_task.id)
        finally:
            _close_connections()
            with self.lock:
                self.in_flight -= 1
                self.idle.notify_all()
            self.slots.release()

    # -- stopping ----------------------------------------------------------------

    def _drain(self) -> None:
        deadline = time.monotonic() + self.grace_seconds
        with self.lock:
            if self.in_flight:
                logger.warning(
                    "worker %s: stopping; %d run(s) in flight get %.0f s to finish",
                    self.worker_id,
                    self.in_flight,
                    self.grace_seconds,
                )
            while self.in_flight and time.monotonic() < deadline:
                self.idle.wait(timeout=min(0.5, max(deadline - time.monotonic(), 0.01)))
            left = self.in_flight
        self.executor.shutdown(wait=False, cancel_futures=True)
        if left:
            handed = _retrying(
                lambda: recovery.hand_back(worker_identity()), what="handing back runs", attempts=5
            )
            _close_connections()
            logger.warning(
                "worker %s: handed back %s run(s) still in flight after the grace period",
                self.worker_id,
                handed,
            )
        self.unfinished = left


def start_worker(*, interval: float = 0.2) -> threading.Thread:
    """The embedded worker: a daemon thread of the ASGI process (no signals of
    its own; the server owns them — runs it leaves behind are recovered by the
    next sweep of the restarted process)."""

    def work() -> None:
        try:
            RunWorker(interval=interval, worker_id=f"inprocess-{os.getpid()}").run()
        except Exception:
            logger.exception("the in-process task worker stopped")

    thread = threading.Thread(target=work, name="sparktide-task-worker", daemon=True)
    thread.start()
    logger.info("in-process task worker started")
    return thread
