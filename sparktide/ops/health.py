"""``/healthz`` (the process answers) and ``/readyz`` (it can do its work).

Both answer JSON without authentication and without secrets: a check reports
``ok`` and, when it fails, only the exception's class name — never a URL, a
host or a message that could carry credentials. ``/readyz`` answers 503 as
soon as one check fails (docs/operations.md):

- ``database``: ``SELECT 1`` within a few seconds;
- ``channelLayer``: a ``group_send`` to a probe group (Redis round trip, or the
  in-memory layer);
- ``worker``: the newest worker heartbeat (``runs.WorkerHeartbeat``, written by every
  live task worker on each sweep tick, runs/heartbeats.py) is younger than
  ``SPARKTIDE_READY_WORKER_SECONDS``, no task waits longer than that (django-tasks-db's
  queue) and no RUNNING run's own ``heartbeat_at`` is older than that.
"""

import asyncio
from collections.abc import Awaitable
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django_tasks_db.models import DBTaskResult

from runs.heartbeats import newest_beat
from runs.models import Run

CHECK_TIMEOUT = 3.0  # seconds per check: readiness must answer quickly, not hang on a dead host


def _no_store(response: JsonResponse) -> JsonResponse:
    response["Cache-Control"] = "no-store"
    return response


@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    return _no_store(JsonResponse({"status": "ok"}))


def _database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        connection.close()  # a thread of its own: give the connection back at once
    return {"ok": True}


def _worker() -> dict[str, Any]:
    try:
        limit = settings.SPARKTIDE_READY_WORKER_SECONDS
        now = timezone.now()
        waiting = DBTaskResult.objects.ready().order_by("enqueued_at").first()
        waited = (now - waiting.enqueued_at).total_seconds() if waiting else 0.0
        newest = DBTaskResult.objects.exclude(started_at=None).order_by("-started_at").first()
        stale_runs = Run.objects.filter(
            status=Run.Status.RUNNING, heartbeat_at__lt=now - timedelta(seconds=limit)
        ).count()
        beat_at = newest_beat()
        beat_age = (now - beat_at).total_seconds() if beat_at else None
        return {
            "ok": beat_age is not None
            and beat_age <= limit
            and waited <= limit
            and stale_runs == 0,
            "lastHeartbeatSecondsAgo": round(beat_age, 3) if beat_age is not None else None,
            "queueWaitSeconds": round(waited, 3),
            "lastTaskStartedSecondsAgo": (
                round((now - newest.started_at).total_seconds(), 3)
                if newest and newest.started_at
                else None
            ),
            "runsWithStaleHeartbeat": stale_runs,
            "thresholdSeconds": limit,
        }
    finally:
        connection.close()


async def _channel_layer() -> dict[str, Any]:
    layer = get_channel_layer()
    if layer is None:
        return {"ok": False, "error": "NotConfigured"}
    await layer.group_send("sparktide-readyz", {"type": "readyz.probe"})
    return {"ok": True, "backend": type(layer).__name__}


async def _bounded(check: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    try:
        return await asyncio.wait_for(check, CHECK_TIMEOUT)
    except TimeoutError:
        return {"ok": False, "error": "Timeout"}
    except Exception as exc:  # any failure is "not ready"; its text may carry secrets
        return {"ok": False, "error": type(exc).__name__}


async def readyz(request: HttpRequest) -> HttpResponse:
    database, channel_layer = await asyncio.gather(
        _bounded(sync_to_async(_database, thread_sensitive=False)()),
        _bounded(_channel_layer()),
    )
    if database["ok"]:
        worker = await _bounded(sync_to_async(_worker, thread_sensitive=False)())
    else:
        worker = {"ok": False, "error": "DatabaseUnavailable"}
    checks = {"database": database, "channelLayer": channel_layer, "worker": worker}
    ready = all(check["ok"] for check in checks.values())
    response = JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks},
        status=200 if ready else 503,
    )
    return _no_store(response)
