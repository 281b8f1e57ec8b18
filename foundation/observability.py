"""One log line and one metric per event an operator watches (docs/operations.md).

The sites where these events happen call one small function each: a run
started or ended (runs/lifecycle.py), a publication outcome
(publication/pipeline.py), a preview outcome (citations/preview.py), a
WebSocket opened or closed (delivery/consumers.py). Each writes exactly one
line on the ``sparktide.events`` logger (JSON with ``LOG_FORMAT=json``), with the
fields as structured ``extra`` members, and counts it in a Prometheus metric of
this process (``/metrics``, sparktide/ops/metrics.py, adds the database-wide
figures). This module knows no model: callers pass plain values.
"""

import logging

from prometheus_client import Counter, Gauge

logger = logging.getLogger("sparktide.events")

RUNS_ENDED = Counter(
    "sparktide_runs_ended",
    "Runs that reached a terminal status in this process, by status.",
    ["status"],
)
PUBLICATIONS = Counter(
    "sparktide_publication_outcomes",
    "Publication candidates by final outcome (COMMITTED, UNCHANGED, REJECTED, …).",
    ["outcome"],
)
PREVIEWS = Counter(
    "sparktide_preview_outcomes",
    "Citation previews by outcome: OK or the error code.",
    ["code"],
)
OPEN_WEBSOCKETS = Gauge(
    "sparktide_open_websockets",
    "Event-stream WebSockets open now.",
    multiprocess_mode="livesum",
)


def _log(message: str, event: str, **fields: object) -> None:
    logger.info(message, extra={"event": event, **fields})


def run_started(*, run_id: str, app: str, agent: str) -> None:
    _log(
        f"run started {run_id} app={app} agent={agent}",
        "run.started",
        run_id=run_id,
        app=app,
        agent=agent,
    )


def run_ended(
    *, run_id: str, app: str, agent: str, status: str, reason: str, duration: float | None
) -> None:
    RUNS_ENDED.labels(status=status).inc()
    shown = "-" if duration is None else f"{duration:.3f}s"
    _log(
        f"run ended {run_id} app={app} agent={agent} outcome={status} reason={reason or '-'} "
        f"duration={shown}",
        "run.ended",
        run_id=run_id,
        app=app,
        agent=agent,
        outcome=status,
        reason=reason,
        duration_seconds=duration,
    )


def publication_outcome(*, run_id: str, candidate_id: str, outcome: str, reason: str) -> None:
    PUBLICATIONS.labels(outcome=outcome).inc()
    _log(
        f"publication {outcome} run={run_id} candidate={candidate_id} reason={reason or '-'}",
        "publication",
        run_id=run_id,
        candidate_id=candidate_id,
        outcome=outcome,
        reason=reason,
    )


def preview_outcome(*, run_id: str, code: str) -> None:
    PREVIEWS.labels(code=code).inc()
    _log(f"preview {code} run={run_id}", "preview", run_id=run_id, code=code)


def websocket_opened() -> None:
    OPEN_WEBSOCKETS.inc()


def websocket_closed() -> None:
    OPEN_WEBSOCKETS.dec()
