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
"""

import os
import signal

from django.conf import settings
from django.db import DatabaseError, OperationalError

KILL_POINTS = frozenset({"after_publication_commit", "after_journal_write"})
RAISE_POINTS = frozenset({"during_publication_commit", "during_event_read"})
# The error each raise point stands for.
_RAISES: dict[str, type[DatabaseError]] = {"during_event_read": OperationalError}
POINTS = KILL_POINTS | RAISE_POINTS


def active_points() -> set[str]:
    return {p.strip() for p in settings.SPARKTIDE_FAULT.split(",") if p.strip()}


def maybe_fault(point: str) -> None:
    if point not in POINTS:
        raise ValueError(f"unknown fault point {point!r}")  # a typo in the code, not config
    if point not in active_points():
        return
    if point in RAISE_POINTS:
        raise _RAISES.get(point, DatabaseError)(f"injected fault at {point}")
    os.kill(os.getpid(), signal.SIGKILL)
