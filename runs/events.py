"""The run event log: append under the run's lock, wake subscribers after commit.

The database log is the truth. The channel layer only wakes consumers, after
the transaction commits; a lost wake-up costs latency, never an event.
"""

import asyncio
import logging

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction
from django.utils import timezone

from runs import inprocess
from runs.models import Run, RunEvent

logger = logging.getLogger(__name__)

TERMINAL_EVENT_TYPES = frozenset({"run.completed", "run.partial", "run.failed", "run.cancelled"})


class RunEnded(Exception):
    """The run was ended elsewhere (recovered as WORKER_LOST, cancelled while queued)."""


def run_group(run_id: str) -> str:
    return f"run.{run_id}"


def notify_run(run_id: str, seq: int) -> None:
    """Wake consumers of a run; best effort by design."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "run.wakeup", "seq": seq}
    loop = inprocess.server_loop
    if loop is not None and isinstance(layer, InMemoryChannelLayer) and not loop.is_closed():
        # The in-process worker: the in-memory layer's queues live on the server's loop.
        asyncio.run_coroutine_threadsafe(layer.group_send(run_group(run_id), message), loop)
        return
    try:
        async_to_sync(layer.group_send)(run_group(run_id), message)
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
