"""A step's write that meets a lost database connection is written again, not the run's end.

A run's worker can be alive and its run healthy while the connection under one of its
writes drops (a failover, a restart, a partition, a proxy reset). Ending the run for it
(``WORKER_LOST``) turned an outage into lost work, so each write of a step goes through
``durable``: on a connection error the broken connection is discarded and, once the
database answers again, the write is tried again — unless it is found to have landed
(its acknowledgement was lost, not the write).

What makes a second try safe:

* **the fence** — every write of the execution carries its epoch
  (``runs.lifecycle.lock_for_execution`` and the one-statement forms): if the run was
  taken over meanwhile, the retried write writes nothing and raises ``RunFenced``;
* **the landed check** — a write that is not idempotent says how to tell it landed:
  the journal rows it carried (by run and timestamp: one row each, microseconds), an
  event that is written once per agent call (by type and data), a Publication attempt
  or a citation of the call made after the write began, a sub-agent's call row. A
  Publication commit cut in flight is Publication's to finish (``resume_commit``: read
  back, else committed again). A write whose check is unknowable (a preview or a
  citation issuance that committed, its answer lost) is not retried: the run ends
  ``WORKER_LOST`` as before, its committed blocks kept.

How long: up to ``wait`` of the process's database timeouts (worker: 120 s,
``SPARKTIDE_DB_WAIT_SECONDS``; sparktide/dbpool.py). That is also the outage the
heartbeat semantics give back: a beat proves the process reached the database under the
run's epoch; its absence during an outage proves nothing (no one can beat), so a sweep
that comes late holds stale recovery for one more window after the database returns
(runtime/workers.py). A retry therefore lands before any sweep may take the run — or
meets the fence if one did. docs/reliability.md, "Outages".
"""

import logging
import time
from collections.abc import Callable
from typing import Any

from django.db import InterfaceError, OperationalError, connection

from runs.models import JournalEntry, RunEvent

logger = logging.getLogger(__name__)

CONNECTION_ERRORS = (OperationalError, InterfaceError)


class Unknowable(OperationalError):
    """Raised by a landed check that cannot tell: the write is not tried again and this
    ends the run's execution as the lost connection would have (``WORKER_LOST``)."""


class Landed(Exception):
    """Raised by ``durable`` when the write is found to have landed after its connection
    was lost: there is no return value to give (the caller goes on as if it returned)."""


def retry_bound() -> float:
    """Seconds a write goes on being retried through an outage: the pool's wait for a
    connection, which sparktide/dbpool.py sets by role (30 s, psycopg_pool's, without)."""
    pool = connection.settings_dict.get("OPTIONS", {}).get("pool")
    return float(pool.get("timeout", 30.0)) if isinstance(pool, dict) else 30.0


def discard_connection() -> None:
    """Drop this thread's broken connection (a pooled one is discarded by the pool)."""
    try:
        connection.close()
    except Exception:  # a broken connection may fail to close: it is gone either way
        connection.connection = None


def durable[T](
    what: str,
    write: Callable[[], T],
    *,
    journal: Any = None,
    landed: Callable[[], bool] | None = None,
    bound: float | None = None,
) -> T:
    """``write()``, tried again after each lost connection until it succeeds, is found
    to have landed (``Landed``), or ``bound`` seconds have passed (the error is raised).

    ``journal`` (a ``runtime.state.Journal``): its kept entries ride on the write; they
    are restored before each try, and dropped once found written. ``landed``: whether
    the rest of the write is in the database already (None: trying again is harmless).
    Never inside a transaction: a connection lost there is the transaction's end.
    """
    kept = list(journal.pending) if journal is not None else []
    deadline = time.monotonic() + (retry_bound() if bound is None else bound)
    delay = 0.1
    while True:
        if journal is not None:
            journal.pending = list(kept)
        try:
            return write()
        except CONNECTION_ERRORS as exc:
            # SQLite's OperationalError is a lock, not a lost connection: not ours.
            if connection.in_atomic_block or connection.vendor != "postgresql":
                raise
            discard_connection()
            if time.monotonic() >= deadline:
                raise
            logger.warning("%s: database connection lost (%s); writing it again", what, exc)
        while True:
            time.sleep(delay)
            delay = min(delay * 2, 2.0)
            try:
                if kept and journal_landed(kept):
                    kept = []
                if landed is not None and landed():
                    if journal is not None:
                        journal.pending = []
                    raise Landed(what)
                break
            except Unknowable:
                raise
            except CONNECTION_ERRORS:
                discard_connection()
                if time.monotonic() >= deadline:
                    raise


def journal_landed(rows: list[tuple[Any, ...]]) -> bool:
    """Whether kept journal rows (``Journal.pending`` tuples) were written: the last
    one, by run, kind and timestamp — rows of one statement land together."""
    run_id, _call, kind, _tool, _step, _data, at = rows[-1]
    return JournalEntry.objects.filter(run_id=run_id, kind=kind, at=at).exists()


def event_landed(run_id: str, type: str, data: dict[str, Any]) -> Callable[[], bool]:
    """A check for an event written once (per agent call, per stream, per run)."""
    return lambda: RunEvent.objects.filter(run_id=run_id, type=type, data__contains=data).exists()
