"""daphne under a profiler, for bench/delivery.py --profile DIR.

    python bench/profiled_daphne.py DIR [daphne arguments…]

Runs daphne in this process under cProfile (on Python ≥ 3.12 one profiler sees
every thread: the event loop and the ``database_sync_to_async`` threads), and
logs every SQL statement (count and time per statement shape). When daphne
stops (SIGTERM), it writes into DIR:

  daphne.prof    every thread (pstats)
  statements.txt statement shapes by total time: count, total ms, mean ms
  calls.txt      the delivery functions called in database threads: count, total ms
  timeline.json  per seq, monotonic times: each wake-up's arrival at a socket, each
                 shared read's start and end, each frame's send (bench/delivery.py
                 prints it against the commit times)

SPARKTIDE_BENCH_CPROFILE=0 leaves cProfile out (its overhead slows every thread
several times over) and keeps the statement log and the timeline.

SIGUSR1 starts a fresh window (profile and logs emptied: the connects of hundreds of
sockets are left out), SIGUSR2 ends it; without them the whole life is recorded.
"""

from __future__ import annotations

import cProfile
import json
import os
import re
import signal
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

# Not bench/ first on the path: bench/publication.py would shadow the publication app.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
OUT = Path(sys.argv[1])
OUT.mkdir(parents=True, exist_ok=True)
sys.argv = ["daphne", *sys.argv[2:]]

_lock = threading.Lock()
_statements: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
_calls: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
# seq → {"wake": [t…], "read": [(start, end)…], "send": [t…]}
_timeline: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
_NUMBERS = re.compile(r"\b\d+\b|'[^']*'")


def _shape(sql: str) -> str:
    return _NUMBERS.sub("?", " ".join(sql.split()))[:160]


def _log_statement(execute, sql, params, many, context):
    started = time.perf_counter()
    try:
        return execute(sql, params, many, context)
    finally:
        elapsed = time.perf_counter() - started
        with _lock:
            entry = _statements[_shape(sql)]
            entry[0] += 1
            entry[1] += elapsed


def _install() -> None:
    from channels.db import DatabaseSyncToAsync
    from django.db.backends.signals import connection_created

    def on_connection(sender, connection, **kwargs):
        if _log_statement not in connection.execute_wrappers:
            connection.execute_wrappers.append(_log_statement)

    connection_created.connect(on_connection, weak=False)
    real = DatabaseSyncToAsync.thread_handler

    def thread_handler(self, loop, *args, **kwargs):
        # Every statement of this thread goes through the log, pooled connections too.
        from django.db import connection

        if _log_statement not in connection.execute_wrappers:
            connection.execute_wrappers.append(_log_statement)
        name = getattr(self.func, "__qualname__", repr(self.func))
        started = time.perf_counter()
        try:
            return real(self, loop, *args, **kwargs)
        finally:
            with _lock:
                entry = _calls[name]
                entry[0] += 1
                entry[1] += time.perf_counter() - started

    DatabaseSyncToAsync.thread_handler = thread_handler
    _install_timeline()


def _install_timeline() -> None:
    """Stamp each wake-up's arrival, each read, each send of the delivery path."""

    from delivery.sender import RunSender

    real_wakeup = RunSender.wake_up
    real_read_log = RunSender._read_log
    real_send_frames = RunSender._send_frames
    real_take_shared = RunSender.take_shared

    def wake_up(self, message):
        seq = message.get("seq")
        if isinstance(seq, int):
            _timeline[seq]["wake"].append(time.monotonic())
        return real_wakeup(self, message)

    async def read_log(self, limit, *, after):
        started = time.monotonic()
        frames = await real_read_log(self, limit, after=after)
        for seq, _, _ in frames:
            _timeline[seq]["read"].append((started, time.monotonic()))
        return frames

    async def send_frames(self, frames):
        # Every event frame goes out here, on the fast path (delivery/wire.py)
        # or through the ASGI send.
        await real_send_frames(self, frames)
        now = time.monotonic()
        for seq, _, _ in frames:
            _timeline[seq]["send"].append(now)

    def take_shared(self, frames, wires, *, read_started):
        # A shared read written for a socket waiting for it (RunTail.write_to_waiting).
        wrote = real_take_shared(self, frames, wires, read_started=read_started)
        if wrote:
            now = time.monotonic()
            for seq, _, _ in frames:
                _timeline[seq]["send"].append(now)
        return wrote

    RunSender.wake_up = wake_up
    RunSender._read_log = read_log
    RunSender._send_frames = send_frames
    RunSender.take_shared = take_shared


def _write(profile: cProfile.Profile | None) -> None:
    if profile is not None:
        profile.dump_stats(OUT / "daphne.prof")
    (OUT / "timeline.json").write_text(json.dumps(_timeline))
    with _lock:
        statements = sorted(_statements.items(), key=lambda kv: -kv[1][1])
        calls = sorted(_calls.items(), key=lambda kv: -kv[1][1])
    with open(OUT / "statements.txt", "w") as f:
        for shape, (count, total) in statements:
            f.write(
                f"{int(count):>8} {total * 1000:10.1f} ms {total * 1000 / count:8.3f} ms  {shape}\n"
            )
    with open(OUT / "calls.txt", "w") as f:
        for name, (count, total) in calls:
            f.write(
                f"{int(count):>8} {total * 1000:10.1f} ms {total * 1000 / count:8.3f} ms  {name}\n"
            )


def main() -> None:
    import django

    django.setup()
    _install()
    from daphne.cli import CommandLineInterface

    profile = [cProfile.Profile()]

    cpu = os.environ.get("SPARKTIDE_BENCH_CPROFILE", "1") != "0"

    def start_window(signum, frame) -> None:
        profile[0].disable()
        with _lock:
            _statements.clear()
            _calls.clear()
            _timeline.clear()
        profile[0] = cProfile.Profile()
        if cpu:
            profile[0].enable()

    def end_window(signum, frame) -> None:
        profile[0].disable()

    signal.signal(signal.SIGUSR1, start_window)
    signal.signal(signal.SIGUSR2, end_window)
    if cpu:
        profile[0].enable()
    try:
        CommandLineInterface.entrypoint()
    except SystemExit:
        pass
    finally:
        profile[0].disable()
        _write(profile[0] if cpu else None)


if __name__ == "__main__":
    main()
