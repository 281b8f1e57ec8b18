"""/healthz says the process answers; /readyz checks the database, the channel layer
and the workers, answers 503 when one fails, and never shows a secret."""

import json
import os
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

from runs.models import WorkerHeartbeat
from tests.realtime.processes import free_port, process_env, start_daphne


def test_healthz_answers_ok_without_credentials(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Content-Type"] == "application/json"
    assert "no-store" in response["Cache-Control"]


def beating(worker_id: str = "worker-a", age_seconds: float = 0.0) -> WorkerHeartbeat:
    return WorkerHeartbeat.objects.create(
        worker_id=worker_id,
        host="host-a",
        pid=4242,
        beat_at=timezone.now() - timedelta(seconds=age_seconds),
    )


@pytest.mark.django_db(transaction=True)
def test_readyz_is_ready_with_the_database_the_channel_layer_and_an_idle_queue(client):
    beating()
    response = client.get("/readyz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "channelLayer", "worker"}
    assert all(check["ok"] for check in body["checks"].values())
    assert body["checks"]["worker"]["queueWaitSeconds"] == 0
    assert 0 <= body["checks"]["worker"]["lastHeartbeatSecondsAgo"] < 5
    assert "host-a" not in response.content.decode()  # no host or pid shown


@pytest.mark.django_db(transaction=True)
def test_readyz_fails_with_no_worker_heartbeat(client):
    response = client.get("/readyz")
    body = response.json()
    assert response.status_code == 503, body
    assert body["checks"]["worker"]["ok"] is False
    assert body["checks"]["worker"]["lastHeartbeatSecondsAgo"] is None
    assert body["checks"]["database"]["ok"] is True


@pytest.mark.django_db(transaction=True)
def test_readyz_fails_when_the_newest_heartbeat_is_older_than_the_threshold(client, settings):
    settings.SPARKTIDE_READY_WORKER_SECONDS = 30
    beating("worker-a", age_seconds=31)
    beating("worker-b", age_seconds=45)
    response = client.get("/readyz")
    body = response.json()
    assert response.status_code == 503, body
    assert body["checks"]["worker"]["ok"] is False
    assert 31 <= body["checks"]["worker"]["lastHeartbeatSecondsAgo"] < 40
    beating("worker-c", age_seconds=29)  # one live worker is enough
    assert client.get("/readyz").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_workers_sweep_tick_writes_its_heartbeat(client):
    from runtime.workers import RunWorker

    worker = RunWorker(worker_id="sweeper-1", sweep_seconds=60)
    try:
        worker._maybe_sweep()
        first = WorkerHeartbeat.objects.get(pk="sweeper-1")
        assert first.pid == os.getpid() and first.host
        worker.next_sweep = 0.0  # the next tick is due
        worker._maybe_sweep()
        assert WorkerHeartbeat.objects.get(pk="sweeper-1").beat_at > first.beat_at
        assert WorkerHeartbeat.objects.count() == 1
        assert client.get("/readyz").status_code == 200
    finally:
        worker.executor.shutdown()


def waiting_task(age_seconds: float) -> DBTaskResult:
    task = DBTaskResult.objects.create(
        args_kwargs={"args": ["run_x"], "kwargs": {}},
        task_path="runtime.tasks.execute_run_task",
        backend_name="default",
        run_after=get_date_max(),
    )
    DBTaskResult.objects.filter(pk=task.pk).update(
        enqueued_at=timezone.now() - timedelta(seconds=age_seconds)
    )
    return task


@pytest.mark.django_db(transaction=True)
def test_readyz_fails_when_a_task_waits_longer_than_the_threshold(client, settings):
    settings.SPARKTIDE_READY_WORKER_SECONDS = 30
    beating()
    waiting_task(5)
    assert client.get("/readyz").status_code == 200  # waiting, but not for long
    waiting_task(31)
    response = client.get("/readyz")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "unavailable"
    assert body["checks"]["worker"]["ok"] is False
    assert body["checks"]["worker"]["queueWaitSeconds"] >= 31
    assert body["checks"]["database"]["ok"] is True


@pytest.mark.slow
def test_readyz_fails_when_the_database_is_unreachable_and_shows_no_secret():
    closed = free_port()  # nothing listens there
    port = free_port()
    url = f"postgres://sparktide:hunter2-secret@127.0.0.1:{closed}/nowhere"
    server = start_daphne(port, process_env(DATABASE_URL=url, LOG_LEVEL="ERROR"))
    try:
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
        response = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=20)
        assert response.status_code == 503, response.text
        body = response.json()
        assert body["status"] == "unavailable"
        assert body["checks"]["database"]["ok"] is False
        assert body["checks"]["worker"]["ok"] is False
        assert body["checks"]["channelLayer"]["ok"] is True
        text = json.dumps(body)
        for secret in ("hunter2", "sparktide:", str(closed), "nowhere"):
            assert secret not in text
    finally:
        server.stop()
