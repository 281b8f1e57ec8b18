"""One log line per event that matters — run started/ended, publication outcome,
preview outcome — written where it happens, JSON lines with LOG_FORMAT=json, and the
Prometheus metrics at /metrics behind SPARKTIDE_METRICS."""

import asyncio
import json
import logging
import subprocess
import sys

import pytest

from citations.models import CitationReference
from tests import factories
from tests.ops.test_health import waiting_task
from tests.realtime.processes import ROOT, process_env

EVENTS = "sparktide.events"


@pytest.fixture
def events(caplog):
    caplog.set_level(logging.INFO, logger=EVENTS)

    def of(kind: str) -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.name == EVENTS and r.event == kind]

    return of


def test_a_run_logs_one_start_and_one_end_with_its_app_agent_duration_and_outcome(make_run, events):
    run = make_run({"search": "营收"}, {"answerPart": "营收增长 12% [[cite:{{c1}}]]"})
    (started,) = events("run.started")
    (ended,) = events("run.ended")
    assert started.run_id == ended.run_id == run.pk
    assert started.app == ended.app == "business"
    assert started.agent == ended.agent == "researcher"
    assert ended.outcome == "COMPLETED" and ended.reason == ""
    run.refresh_from_db()
    took = (run.completed_at - run.started_at).total_seconds()
    assert 0 <= took <= ended.duration_seconds < took + 1  # from its start, read under the lock
    assert run.pk in ended.getMessage() and "outcome=COMPLETED" in ended.getMessage()


def test_a_failed_run_logs_its_outcome_and_reason(make_run, events):
    make_run({"fail": "模型不可用"})
    (ended,) = events("run.ended")
    assert ended.outcome == "FAILED" and ended.reason == "PROVIDER_FAILED"


def test_a_cancelled_queued_run_logs_its_end_without_a_duration(app, alice, knowledge, events):
    run = factories.scripted_run(app, alice, [{"text": "x"}], knowledge=[knowledge], execute=False)
    response = factories.client_for(alice).post(f"/v1/apps/business/runs/{run.pk}/cancel")
    assert response.status_code == 202
    (ended,) = events("run.ended")
    assert ended.outcome == "CANCELLED" and ended.duration_seconds is None
    assert events("run.started") == []


def test_every_publication_candidate_logs_one_final_outcome(make_run, events):
    run = make_run(
        {"search": "营收"},
        {"answerPart": "第一段 [[cite:{{c1}}]]"},
        {"answerPart": "第一段 [[cite:{{c1}}]]", "replaces": "{{p1}}"},  # identical: UNCHANGED
        {"answerPart": "改 [[cite:{{c1}}]]", "replaces": "pub_doesnotexist"},  # REJECTED
    )
    outcomes = [(r.run_id, r.outcome, r.reason) for r in events("publication")]
    assert outcomes == [
        (run.pk, "COMMITTED", ""),
        (run.pk, "UNCHANGED", ""),
        (run.pk, "REJECTED", "REPLACES_TARGET_INVALID"),
    ]


def test_every_preview_logs_its_outcome_by_code(make_run, alice, bob, events):
    run = make_run({"search": "营收"}, {"answerPart": "营收 [[cite:{{c1}}]]"})
    cite = CitationReference.objects.filter(run=run).first().pk
    url = f"/v1/apps/business/runs/{run.pk}/citations/{{}}/preview"
    assert factories.client_for(alice).get(url.format(cite)).status_code == 200
    assert factories.client_for(alice).get(url.format("https://x")).status_code == 404
    assert factories.client_for(bob).get(url.format(cite)).status_code == 404
    assert factories.client_for().get(url.format(cite)).status_code == 401
    codes = [(r.run_id, r.code) for r in events("preview")]
    assert codes == [
        (run.pk, "OK"),
        (run.pk, "CITATION_NOT_AVAILABLE"),
        (run.pk, "RESOURCE_NOT_FOUND"),
        (run.pk, "AUTHENTICATION_REQUIRED"),
    ]


LOG_ONE_EVENT = """
import django
django.setup()
from foundation import observability
observability.run_ended(run_id="run_abc", app="desk", agent="researcher", status="COMPLETED",
                        reason="", duration=1.25)
"""


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_log_format_json_writes_each_event_as_one_json_line(log_format):
    env = process_env(LOG_FORMAT=log_format, LOG_LEVEL="INFO")
    done = subprocess.run(
        [sys.executable, "-c", LOG_ONE_EVENT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "run_abc" in line]
    assert len(lines) == 1, done.stderr  # one handler: never the same line twice
    if log_format == "text":
        assert "run ended run_abc app=desk agent=researcher outcome=COMPLETED" in lines[0]
        return
    record = json.loads(lines[0])
    assert record["logger"] == EVENTS and record["level"] == "INFO"
    assert record["event"] == "run.ended" and record["run_id"] == "run_abc"
    assert record["app"] == "desk" and record["agent"] == "researcher"
    assert record["outcome"] == "COMPLETED" and record["duration_seconds"] == 1.25
    assert "time" in record


def test_metrics_are_off_by_default(client, db, settings):
    settings.SPARKTIDE_METRICS = False
    assert client.get("/metrics").status_code == 404


def metric(text: str, name: str, **labels) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    head = f"{name}{{{wanted}}}" if labels else name
    for line in text.splitlines():
        if line.startswith(head + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{head} not in the metrics")


def test_metrics_count_runs_publications_previews_and_the_queue(
    make_run, tenant, alice, client, settings
):
    settings.SPARKTIDE_METRICS = True
    before = client.get("/metrics").content.decode()
    previews_before = _maybe(before, "sparktide_preview_outcomes_total", code="OK")
    run = make_run({"search": "营收"}, {"answerPart": "营收 [[cite:{{c1}}]]"})
    make_run({"fail": "x"}, key="failing")
    cite = CitationReference.objects.filter(run=run).first().pk
    url = f"/v1/apps/business/runs/{run.pk}/citations/{cite}/preview"
    assert factories.client_for(alice).get(url).status_code == 200
    queued = factories.scripted_run(
        factories.make_app(tenant, "other", members=[alice]),
        alice,
        [{"text": "x"}],
        key="queued",
        execute=False,
    )
    waiting_task(1)
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert metric(text, "sparktide_runs", status="COMPLETED") == 1
    assert metric(text, "sparktide_runs", status="FAILED") == 1
    assert metric(text, "sparktide_runs", status="QUEUED") == 1
    assert metric(text, "sparktide_publication_attempts", outcome="COMMITTED") == 1
    assert metric(text, "sparktide_task_queue_depth") >= 1
    assert metric(text, "sparktide_preview_outcomes_total", code="OK") == previews_before + 1
    assert metric(text, "sparktide_open_websockets") >= 0
    assert queued.status == "QUEUED"


def _maybe(text: str, name: str, **labels) -> float:
    try:
        return metric(text, name, **labels)
    except AssertionError:
        return 0.0


@pytest.mark.django_db(transaction=True)
async def test_the_open_websockets_gauge_counts_accepted_streams_only(app, alice, knowledge):
    from channels.db import database_sync_to_async
    from prometheus_client import REGISTRY

    from tests.realtime.helpers import open_and_read, socket, ticket_for

    def open_now() -> float:
        return REGISTRY.get_sample_value("sparktide_open_websockets")

    run = await database_sync_to_async(factories.scripted_run)(
        app, alice, [{"text": "x"}], knowledge=[knowledge], execute=False
    )
    before = open_now()
    live = socket(run, ticket=await ticket_for(run, alice))
    connected, _ = await live.connect(timeout=5)
    assert connected
    for _ in range(100):  # the consumer counts itself once its delivery log is open
        if open_now() == before + 1:
            break
        await asyncio.sleep(0.05)
    assert open_now() == before + 1
    refused = await open_and_read(socket(run, ticket="st_not_a_ticket"))
    assert refused[1] == 4401 and open_now() == before + 1
    await live.disconnect(timeout=5)
    assert open_now() == before


def test_a_client_error_is_not_logged_a_second_time_by_django(client, db, caplog):
    """The access log records every 4xx once; django.request would add a second line."""
    import logging

    with caplog.at_level(logging.DEBUG):
        response = client.get("/v1/apps/no-such-app/runs/run_missing")
    assert response.status_code in (401, 404)
    assert not [r for r in caplog.records if r.name == "django.request"]
