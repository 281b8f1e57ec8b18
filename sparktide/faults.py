"""Fault injection for recovery tests: off unless SPARKTIDE_FAULT names a point.

At a named point the worker process kills itself with SIGKILL — no cleanup, no
finally blocks, no flush — exactly like a machine losing power or an OOM kill.
Points: after_publication_commit (commit done, journal not written),
after_journal_write (journal written, tool receipt not), during_publication_commit
(raises a DatabaseError inside the commit transaction, for SAVE tests).
"""

import os
import signal

from django.conf import settings
from django.db import DatabaseError


def maybe_fault(point: str) -> None:
    active = {p.strip() for p in settings.SPARKTIDE_FAULT.split(",") if p.strip()}
    if point not in active:
        return
    if point.startswith("during_"):
        raise DatabaseError(f"injected fault at {point}")
    os.kill(os.getpid(), signal.SIGKILL)
