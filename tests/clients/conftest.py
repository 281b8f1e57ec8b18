"""The clients' tests run against a REAL SparkTide: daphne (HTTP + WebSocket) with its
in-process task worker, on the pytest-django PostgreSQL test database.

Data made by a test with ``django_db(transaction=True)`` is committed, so the server sees it.
The server is per test for the reason given in tests/console/conftest.py (the flush between
transactional tests re-creates permission rows that a long-lived process would keep cached),
and it is stopped — process group and all — before the database is flushed. Its access log
records every request that reached it, which is how a test proves that one did not.
"""

import json
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.db import connection

from runs.models import Run
from tests import factories
from tests.clients.checkout import use_this_checkouts_client
from tests.realtime.processes import DAPHNE, Process, database_url, free_port, process_env
from tests.remote_server import remote_knowledge  # noqa: F401 - the fixture

use_this_checkouts_client()

STEPS = (
    {"search": "营收增长", "topK": 2},
    {"answerPart": "北辰医药三季度营收增长 12% [[cite:{{c1}}]]。"},
    {"answerPart": "研发投入同比增加 [[cite:{{c2}}]]。"},
)
# A slower script: events arrive over a second or two, so a socket sees them live.
SLOW_STEPS = (
    {"search": "营收增长", "topK": 2},
    {"sleep": 0.4},
    {"answerPart": "营收增长 [[cite:{{c1}}]]"},
    {"sleep": 0.4},
    {"answerPart": "营收增长 12% [[cite:{{c1}}]]", "replaces": "{{p1}}"},
    {"sleep": 0.4},
    {"answerPart": "研发投入同比增加 [[cite:{{c2}}]]。"},
)
# Long enough to cancel while it runs: 15 s of model turns, each 1 s and empty. The engine
# reads the cancel flag at every step boundary, so a cancel lands within a second; one long
# sleep before a single final turn would be a turn the run finishes despite the cancel.
SLEEPY_STEPS = tuple(step for _ in range(15) for step in ({"sleep": 1.0}, {"text": ""})) + (
    {"answerPart": "迟到的回答"},
)


@dataclass
class LiveServer:
    url: str
    port: int
    access_log: Path
    process: Process

    def requests(self) -> list[str]:
        """The request lines daphne logged ("GET /v1/… 200"), oldest first."""
        if not self.access_log.exists():
            return []
        return self.access_log.read_text().splitlines()

    def requests_to(self, fragment: str) -> list[str]:
        return [line for line in self.requests() if fragment in line]


def _wait_listening(server: Process, port: int, timeout: float = 30.0) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.popen.poll() is not None:
            raise RuntimeError(f"daphne exited early:\n{server.output()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"daphne did not listen on {port}:\n{server.output()}")


def start_live_server(**settings: str) -> LiveServer:
    factories.require(
        connection.vendor == "postgresql", "the clients' tests need PostgreSQL shared with daphne"
    )
    env = process_env(
        DATABASE_URL=database_url(connection.settings_dict),
        SPARKTIDE_INPROCESS_WORKER="1",
        SPARKTIDE_DB_POOL_SIZE="6",
        SPARKTIDE_WS_POLL_SECONDS="0.2",
        PYTHONUNBUFFERED="1",
        **settings,
    )
    env.pop("REDIS_URL", None)  # one process: the in-memory layer wakes its sockets
    port = free_port()
    access_log = Path(tempfile.mkdtemp(prefix="sparktide-access-")) / "access.log"
    server = Process(
        [
            DAPHNE,
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "--access-log",
            str(access_log),
            "sparktide.asgi:application",
        ],
        env,
    )
    try:
        _wait_listening(server, port)
    except RuntimeError:
        server.stop()
        raise
    return LiveServer(f"http://127.0.0.1:{port}", port, access_log, server)


@pytest.fixture
def sparktide_server(transactional_db):
    server = start_live_server()
    yield server
    server.process.stop(timeout=3)


@pytest.fixture
def knowledge(tenant, app, alice):
    return factories.fund_reports(tenant, app, alice)


@pytest.fixture
def agents(app, knowledge):
    """Three scripted agents pinned in the app: researcher, slow, sleepy."""
    for key, steps in (("researcher", STEPS), ("slow", SLOW_STEPS), ("sleepy", SLEEPY_STEPS)):
        factories.make_agent(
            app.tenant, key, model=factories.scripted(*steps), knowledge=[knowledge], pin_to=[app]
        )


def wait_for_terminal(run_id: str, timeout: float = 30.0) -> Run:
    deadline = time.monotonic() + timeout
    while True:
        run = Run.objects.get(pk=run_id)
        if run.is_terminal:
            return run
        if time.monotonic() > deadline:
            raise AssertionError(f"{run_id} did not finish in {timeout} s ({run.status})")
        time.sleep(0.1)


def wait_for_running(run_id: str, timeout: float = 30.0) -> None:
    """Until the worker has started the run, so that a cancel lands while it runs."""
    deadline = time.monotonic() + timeout
    while (status := Run.objects.values_list("status", flat=True).get(pk=run_id)) == "QUEUED":
        if time.monotonic() > deadline:
            raise AssertionError(f"{run_id} was not started in {timeout} s")
        time.sleep(0.05)
    assert status == Run.Status.RUNNING, status


def verified_citations(run_id: str) -> list[str]:
    from runs.models import RunEvent

    check = RunEvent.objects.get(run_id=run_id, type="citation.verified").data
    return [ref["id"] for ref in check["references"] if ref["status"] == "VERIFIED"]


# --- a real local HTTP server that counts what reaches it ------------------------------


@dataclass
class CountingServer:
    """Answers every request with ``status`` and ``body`` after ``delay`` seconds, and
    counts the requests (method, path) that reached it."""

    status: int = 503
    body: dict = field(
        default_factory=lambda: {
            "type": "urn:sparktide:problem:knowledge-source-unavailable",
            "title": "Service Unavailable",
            "status": 503,
            "code": "KNOWLEDGE_SOURCE_UNAVAILABLE",
            "detail": "The knowledge source cannot be reached.",
        }
    )
    delay: float = 0.0
    requests: list = field(default_factory=list)
    url: str = ""

    def count(self) -> int:
        return len(self.requests)


@pytest.fixture
def counting_servers():
    """Start as many counting servers as a test needs: ``counting_servers(status=…, delay=…)``."""
    started = []

    def start(**fields) -> CountingServer:
        state = CountingServer(**fields)

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                state.requests.append((self.command, self.path))
                if state.delay:
                    time.sleep(state.delay)
                payload = json.dumps(state.body).encode()
                try:
                    self.send_response(state.status)
                    self.send_header("Content-Type", "application/problem+json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (timeout, cancellation)

            do_GET = do_POST = _answer

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        state.url = f"http://127.0.0.1:{server.server_address[1]}"
        started.append(server)
        return state

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


@pytest.fixture
def counting_server(counting_servers) -> CountingServer:
    return counting_servers()
