"""The task workers' heartbeat: each live worker upserts its row on every sweep tick
(runtime/workers.py); /readyz (sparktide/ops/health.py) reads the newest beat."""

import logging
import os
import socket
from datetime import datetime, timedelta

from django.db import InterfaceError, OperationalError
from django.utils import timezone

from runs.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

FORGET_AFTER = timedelta(days=1)  # rows of workers long gone are pruned by the live ones


def beat(worker_id: str) -> None:
    """Record that ``worker_id`` is alive now (one upsert, plus a prune of long-dead rows).

    A lost database connection propagates, for the worker's loop to handle like any other;
    any other failure is logged and the worker goes on running runs."""
    now = timezone.now()
    try:
        WorkerHeartbeat.objects.bulk_create(
            [
                WorkerHeartbeat(
                    worker_id=worker_id[:64],
                    host=socket.gethostname()[:255],
                    pid=os.getpid(),
                    beat_at=now,
                )
            ],
            update_conflicts=True,
            unique_fields=["worker_id"],
            update_fields=["host", "pid", "beat_at"],
        )
        WorkerHeartbeat.objects.filter(beat_at__lt=now - FORGET_AFTER).delete()
    except (InterfaceError, OperationalError):
        raise
    except Exception:  # a bug here must not stop the worker
        logger.exception("worker %s: heartbeat failed", worker_id)


def newest_beat() -> datetime | None:
    return WorkerHeartbeat.objects.order_by("-beat_at").values_list("beat_at", flat=True).first()
