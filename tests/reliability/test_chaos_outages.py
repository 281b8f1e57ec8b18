"""Ordinary database and Redis faults stall nothing (docs/reliability.md "Outages").

The database is made unreachable by stopping a TCP proxy this test owns between the
processes and PostgreSQL (the shared server is never restarted). Each scenario prints
one line: runs started/ended, events lost/duplicated/after the terminal, sockets
stalled, 5xx, seconds to recover. ``make test`` runs the short version;
SPARKTIDE_CHAOS=full lengthens the outage to 60 s.
"""

import contextlib
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from django.db import connection
from django.db.models import OuterRef, Subquery

from runs.events import TERMINAL_EVENT_TYPES
from runs.models import Run, RunEvent
from tests.realtime.processes import database_url, free_port
from tests.reliability.support import (
    TERMINAL,
    Worker,
    audit,
    reliability_env,
    start_named_daphne,
    statuses,
    wait_for,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FULL = os.environ.get("SPARKTIDE_CHAOS") == "full"
OUTAGE_SECONDS = 60.0 if FULL else 8.0


class DatabaseProxy:
    """A TCP proxy to PostgreSQL that the test can cut: ``down()`` closes the listener
    and resets every open connection (a failover, a network partition, a restart);
    ``up()`` listens again on the same port."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = free_port()
        self.listener: socket.socket | None = None
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.lock = threading.Lock()

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        if self.listener is not None:
            # shutdown wakes the accept blocked in the other thread (close alone does
            # not, and the kernel would go on accepting).
            with contextlib.suppress(OSError):
                self.listener.shutdown(socket.SHUT_RDWR)
            self.listener.close()
            self.listener = None
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            for end in pair:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self.lock:
                self.pairs.append((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            # shutdown first: close alone does not end a socket the other direction's
            # thread is still reading, and the PostgreSQL session behind it would linger.
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    end.close()


@pytest.fixture
def proxy(postgres):
    db = connection.settings_dict
    proxy = DatabaseProxy(db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432))
    proxy.up()
    yield proxy
    proxy.down()


def through(proxy: DatabaseProxy) -> str:
    settings = {**connection.settings_dict, "HOST": "127.0.0.1", "PORT": proxy.port}
    return database_url(settings)


def get(url: str, token: str) -> tuple[int, dict, float]:
    request = urllib.request.Request(
        url, headers={"Authorization": f"Bearer {token}", "Host": "127.0.0.1"}
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=40) as response:
            return response.status, dict(response.headers), time.monotonic() - started
    except urllib.error.HTTPError as error:
        body = json.loads(error.read() or b"{}")
        return (
            error.code,
            {**dict(error.headers), "code": body.get("code")},
            (time.monotonic() - started),
        )


def test_rest_answers_503_fast_during_an_outage_and_serves_again_when_the_database_returns(
    proxy, alice, make_run
):
    """While PostgreSQL is unreachable every API call is answered 503 DATABASE_UNAVAILABLE
    with Retry-After (the pool's 2 s wait, not 30 s); after it returns, calls are 200 again
    within the pool's half-second reconnect."""
    run = make_run({"text": "hi"})
    port = free_port()
    server = start_named_daphne(
        port, reliability_env(DATABASE_URL=through(proxy)), "sparktide-daphne-outage"
    )
    url = f"http://127.0.0.1:{port}/v1/apps/{run.app.slug}/runs/{run.pk}"
    try:
        assert get(url, alice.raw_token)[0] == 200
        proxy.down()
        during = []
        outage_ends = time.monotonic() + OUTAGE_SECONDS
        while time.monotonic() < outage_ends:
            during.append(get(url, alice.raw_token))
        proxy.up()
        back = time.monotonic()
        recovered = wait_for(
            lambda: get(url, alice.raw_token)[0] == 200, timeout=30, interval=0.05, what="200"
        )
        seconds_to_recover = time.monotonic() - back
    finally:
        output = server.output()
        server.stop()
    assert recovered, output
    statuses_during = {status for status, _, _ in during}
    assert statuses_during == {503}, output
    assert {headers.get("code") for _, headers, _ in during} == {"DATABASE_UNAVAILABLE"}
    assert all(headers.get("Retry-After") for _, headers, _ in during)
    slowest = max(seconds for _, _, seconds in during)
    print(
        f"\nrest outage {OUTAGE_SECONDS:.0f}s: requests {len(during)}, 5xx {len(during)}"
        f" (all 503 DATABASE_UNAVAILABLE), slowest answer {slowest:.2f}s,"
        f" seconds to recover {seconds_to_recover:.2f}"
    )


SLOW = tuple(step for _ in range(6) for step in ({"sleep": 2.0}, {"text": "段"}))


def test_runs_whose_workers_are_alive_survive_an_outage(proxy, make_run):
    """Runs in flight while the database is unreachable for OUTAGE_SECONDS: the workers wait
    for it, a step's write cut in flight is written again (runtime/durable.py), the sweep
    holds recovery for a stale window after it, and every run ends COMPLETED — none
    WORKER_LOST, nothing lost, duplicated or written after the terminal."""
    env = reliability_env(
        DATABASE_URL=through(proxy),
        SPARKTIDE_HEARTBEAT_SECONDS="1",
        SPARKTIDE_STALE_AFTER_SECONDS="4",
        SPARKTIDE_SWEEP_SECONDS="1",
    )
    workers = [Worker(env, args=("--concurrency", "4")) for _ in range(2)]
    runs = [make_run(*SLOW) for _ in range(6)]
    ids = [r.pk for r in runs]
    try:
        wait_for(
            lambda: all(s == "RUNNING" for s in statuses(ids).values()),
            timeout=30,
            what="runs to start",
        )
        time.sleep(1.0)
        proxy.down()
        time.sleep(OUTAGE_SECONDS)
        proxy.up()
        back = time.monotonic()
        wait_for(
            lambda: all(s in TERMINAL for s in statuses(ids).values()),
            timeout=90 + OUTAGE_SECONDS,
            what="runs to end",
        )
        ended_after = time.monotonic() - back
    finally:
        outputs = [w.output(limit=1_000_000) for w in workers]
        for w in workers:
            w.stop()
    final = statuses(ids)
    reasons = dict(Run.objects.filter(pk__in=ids).values_list("pk", "reason"))
    faults = audit(ids)
    survived = sum(1 for s in final.values() if s == "COMPLETED")
    rewritten = sum(o.count("writing it again") for o in outputs)
    after_terminal = RunEvent.objects.filter(
        run_id__in=ids,
        seq__gt=Subquery(
            RunEvent.objects.filter(
                run_id=OuterRef("run_id"), type__in=TERMINAL_EVENT_TYPES
            ).values("seq")[:1]
        ),
    ).count()
    print(
        f"\nchaos worker-outage {OUTAGE_SECONDS:.0f}s: runs started {len(ids)}, ended"
        f" {len(final)}, completed {survived}, reasons {sorted(set(reasons.values()))},"
        f" events lost {faults['lost']}, duplicated {faults['duplicated']}, after the terminal"
        f" {after_terminal}, phantom {faults['phantom']}, 5xx 0 (no server in this scenario),"
        f" writes retried {rewritten}, seconds to recover {ended_after:.1f}"
    )
    assert all(faults[k] == 0 for k in ("stuck", "lost", "duplicated", "phantom")), faults
    assert after_terminal == 0
    warnings = [line for o in outputs for line in o.splitlines() if "WARNING" in line]
    assert "WORKER_LOST" not in set(reasons.values()), "\n".join([str(reasons), *warnings])
