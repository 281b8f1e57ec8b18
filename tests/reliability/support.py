"""Real faults for the reliability tests and ``make chaos``: task-worker and
daphne processes on PostgreSQL + Redis, their database backends terminated by
name, runs checked against the publication store for loss and duplication."""

import time
import uuid

import psycopg
from django.db import connection

from tests.realtime.helpers import events_path, ticket_for
from tests.realtime.processes import PYTHON, Process, database_url, process_env, start_daphne
from tests.realtime.wsclient import WSClient

# Fast clocks so a lost run is recovered within a test's patience:
# heartbeat 0.5 s, stale after 3 s, sweep every 0.5 s (bound: 3.5 s).
FAST_RECOVERY = {
    "SPARKTIDE_HEARTBEAT_SECONDS": "0.5",
    "SPARKTIDE_STALE_AFTER_SECONDS": "3",
    "SPARKTIDE_SWEEP_SECONDS": "0.5",
}
TERMINAL = {"COMPLETED", "PARTIAL", "FAILED", "CANCELLED"}


def conninfo() -> dict:
    db = connection.settings_dict
    info = {"dbname": db["NAME"], "host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432}
    info["user"] = db["USER"] or "postgres"
    if db.get("PASSWORD"):
        info["password"] = db["PASSWORD"]
    return info


def terminate_backends(application_name: str, *, older_than: float = 0.0) -> int:
    """pg_terminate_backend every session a process opened (PGAPPNAME names them):
    what a failover, a restart or an idle-timeout proxy does to it.

    ``older_than`` spares sessions still being set up: repeated cuts that also
    kill every reconnection attempt measure psycopg_pool's reconnect back-off
    (1, 2, 4 … s), not SparkTide."""
    with psycopg.connect(**conninfo(), autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = %s AND pid <> pg_backend_pid() "
            "AND backend_start < now() - make_interval(secs => %s)",
            [application_name, older_than],
        ).fetchall()
    return sum(1 for (ok,) in rows if ok)


def backends_of(application_name: str) -> int:
    with psycopg.connect(**conninfo(), autocommit=True) as admin:
        return admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
            [application_name],
        ).fetchone()[0]


def reliability_env(**extra: str) -> dict:
    """Children on this test's database and Redis, with their own channel prefix."""
    from django.conf import settings

    env = process_env(
        DATABASE_URL=database_url(connection.settings_dict),
        SPARKTIDE_CHANNEL_PREFIX=f"sparktide-rel-{uuid.uuid4().hex[:12]}",
        SPARKTIDE_DB_POOL_SIZE="24",
        **FAST_RECOVERY,
    )
    if settings.REDIS_URL:
        env["REDIS_URL"] = settings.REDIS_URL
    env.update(extra)
    return env


class Worker(Process):
    """``manage.py run_worker`` in its own process group, its sessions named."""

    def __init__(self, env: dict, *, name: str | None = None, args: tuple = (), **extra) -> None:
        self.name = name or f"sparktide-worker-{uuid.uuid4().hex[:8]}"
        super().__init__(
            [PYTHON, "manage.py", "run_worker", "--no-startup-delay", "--interval", "0.1", *args],
            {**env, "PGAPPNAME": self.name, "PYTHONUNBUFFERED": "1", **extra},
        )

    def alive(self) -> bool:
        return self.popen.poll() is None


def start_named_daphne(port: int, env: dict, name: str) -> Process:
    return start_daphne(port, {**env, "PGAPPNAME": name})


def wait_for(predicate, *, timeout: float, interval: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def statuses(run_ids) -> dict[str, str]:
    from runs.models import Run

    return dict(Run.objects.filter(pk__in=list(run_ids)).values_list("pk", "status"))


def all_terminal(run_ids) -> bool:
    found = statuses(run_ids)
    return len(found) == len(set(run_ids)) and set(found.values()) <= TERMINAL


def audit(run_ids) -> dict[str, int]:
    """What the store and the log say, per fault class (all must be 0):

    * ``stuck``: runs not in a terminal state;
    * ``lost``: a committed attempt without its block, or a block without its
      answer.published event;
    * ``duplicated``: more than one block per committed attempt, one event per
      revision, or two terminal events;
    * ``phantom``: a journal receipt saying COMMITTED with no committed attempt.
    """
    from publication.models import AnswerBlock, BlockRevision, PublicationAttempt
    from runs.models import JournalEntry, Run, RunEvent

    figures = {"stuck": 0, "lost": 0, "duplicated": 0, "phantom": 0, "blocks": 0}
    for run in Run.objects.filter(pk__in=list(run_ids)):
        if run.status not in TERMINAL:
            figures["stuck"] += 1
        committed = PublicationAttempt.objects.filter(
            run=run, outcome=PublicationAttempt.Outcome.COMMITTED
        )
        revisions = BlockRevision.objects.filter(block__run=run)
        blocks = AnswerBlock.objects.filter(run=run).count()
        figures["blocks"] += blocks
        published = RunEvent.objects.filter(
            run=run, type__in=["answer.published", "answer.revised"]
        ).count()
        if revisions.count() < committed.count() or published < revisions.count():
            figures["lost"] += 1
        if revisions.count() > committed.count() or published > revisions.count():
            figures["duplicated"] += 1
        terminal = RunEvent.objects.filter(run=run, type__startswith="run.").exclude(
            type="run.started"
        )
        if terminal.count() > (1 if run.status in TERMINAL else 0):
            figures["duplicated"] += 1
        candidates = set(committed.values_list("candidate_id", flat=True))
        for data in JournalEntry.objects.filter(
            run=run, kind=JournalEntry.Kind.NOTE, tool="publication"
        ).values_list("data", flat=True):
            receipt = data.get("receipt") if isinstance(data, dict) else None
            if (
                isinstance(receipt, dict)
                and receipt.get("outcome") == "COMMITTED"
                and receipt.get("candidate_id") not in candidates
            ):
                figures["phantom"] += 1
    return figures


async def resume_stream(run, user, port: int, frames: list[dict]) -> WSClient | None:
    """A socket on the server at ``port`` resuming ``run``'s stream after the last seq in
    ``frames`` with a fresh ticket, as docs/events.md tells a client to; None when the
    connection was refused (the caller waits and tries again)."""
    after = frames[-1]["seq"] if frames else 0
    path = events_path(run.app.slug, run.pk, after=after, ticket=await ticket_for(run, user))
    try:
        return await WSClient.connect("127.0.0.1", port, path, origin=f"http://127.0.0.1:{port}")
    except OSError:
        return None
