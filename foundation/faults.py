"""Fault injection for recovery tests: off unless SPARKTIDE_FAULT names a point.

At a named kill point the worker process kills itself with SIGKILL — no cleanup,
no finally blocks, no flush — exactly like a machine losing power or an OOM
kill. Points (comma-separated in SPARKTIDE_FAULT):

* ``after_publication_commit`` — Publication committed; the runtime journal has
  not recorded it (runs/engine.py, right after publish_candidate returns).
* ``after_journal_write`` — the journal recorded the publication; the tool
  receipt to the model has not been written.
* ``during_publication_commit`` — raises a DatabaseError inside Publication's
  commit transaction, after every row is written and before COMMIT: the
  transaction rolls back (a clean save failure), nothing is killed.
* ``during_event_read`` — raises an OperationalError (the database went away)
  in a WebSocket's read of the event log (delivery/fanout.py read_frames).

At a stop point the process stops itself with SIGSTOP — every thread frozen, its
sessions left as they are — until someone sends SIGCONT: a VM paused, a stalled
disk, a GC or swap storm at the worst moment. Each stop point fires once per process.

* ``frozen_holding_run_lock`` — inside the first transaction that took a run's row
  lock through the fence (runs/lifecycle.py ``lock_for_execution``: Publication's
  commit, a citation issuance, a live preview's start), right after the lock.
"""

import os
import signal

from django.conf import settings
from django.db import DatabaseError, OperationalError

KILL_POINTS = frozenset({"after_publication_commit", "after_journal_write"})
RAISE_POINTS = frozenset({"during_publication_commit", "during_event_read"})
STOP_POINTS = frozenset({"frozen_holding_run_lock"})
# The error each raise point stands for.
_RAISES: dict[str, type[DatabaseError]] = {"during_event_read": OperationalError}
POINTS = KILL_POINTS | RAISE_POINTS | STOP_POINTS
_stopped: set[str] = set()  # the stop points this process already stopped at


def active_points() -> set[str]:
    return {p.strip() for p in settings.SPARKTIDE_FAULT.split(",") if p.strip()}


def maybe_fault(point: str) -> None:
    if point not in POINTS:
        raise ValueError(f"unknown fault point {point!r}")  # a typo in the code, not config
    if point not in active_points():
        return
    if point in RAISE_POINTS:
        raise _RAISES.get(point, DatabaseError)(f"injected fault at {point}")
    if point in STOP_POINTS:
        if point not in _stopped:
            _stopped.add(point)
            os.kill(os.getpid(), signal.SIGSTOP)
        return
    os.kill(os.getpid(), signal.SIGKILL)
