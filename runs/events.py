"""The run event log: append under the run's lock, wake subscribers after commit.

The database log is the truth. Whoever delivers events registers a waker
(``register_waker``; delivery does it when the app is ready), called after the
transaction commits; a lost wake-up costs latency, never an event. The log
never imports its readers: the arrow points from delivery down to the log.
"""

import logging
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from runs.models import Run, RunEvent

logger = logging.getLogger(__name__)

Waker = Callable[[str, int], None]
_wakers: list[Waker] = []

TERMINAL_EVENT_TYPES = frozenset({"run.completed", "run.partial", "run.failed", "run.cancelled"})


class RunEnded(Exception):
    """The run was ended elsewhere (recovered as WORKER_LOST, cancelled while queued)."""


def register_waker(waker: Waker) -> None:
    """Have ``waker(run_id, seq)`` called after each committed append (idempotent)."""
    if waker not in _wakers:
        _wakers.append(waker)


def notify_run(run_id: str, seq: int) -> None:
    """Wake the run's readers; best effort by design."""
    for waker in _wakers:
        try:
            waker(run_id, seq)
        except Exception:  # the log is the truth; a consumer polls and catches up
            logger.warning("wake-up for %s lost", run_id, exc_info=True)


def append_event(
    run: Run, type: str, data: dict | None = None, *, locked: bool = False
) -> RunEvent:
    """Append one event with the run's next seq.

    ``locked=True`` means the caller already holds ``select_for_update`` on the
    run row inside its transaction (Publication's commit does, for its counters).
    """
    # Under the caller's lock we are already inside its transaction: no savepoint needed.
    with transaction.atomic(savepoint=not locked):
        if not locked:
            last_seq, status = (
                Run.objects.select_for_update().values_list("last_seq", "status").get(pk=run.pk)
            )
            if status in Run.TERMINAL:
                # Nothing follows a run's terminal event; its writer was ended elsewhere.
                raise RunEnded(f"{run.pk} already ended ({status}); {type} not appended")
            run.last_seq = last_seq
        run.last_seq += 1
        Run.objects.filter(pk=run.pk).update(last_seq=run.last_seq)
        event = RunEvent.objects.create(
            run=run, seq=run.last_seq, type=type, data=data or {}, at=timezone.now()
        )
        run_id, seq = run.pk, event.seq
        transaction.on_commit(lambda: notify_run(run_id, seq))
    return event
