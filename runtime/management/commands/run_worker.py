"""The task worker process: many runs at once, periodic recovery, clean stop.

See runtime/workers.py for what it does and docs/deployment.md for how to
run it. SIGTERM/SIGINT: stop claiming, let in-flight runs finish within the
grace period, hand back the rest, exit 0. A second signal exits at once (the
runs it held are recovered by the next sweep of another worker).
"""

import os
import signal
import sys
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from runtime.workers import RunWorker


class Command(BaseCommand):
    help = "Process run tasks (django_tasks_db queue), many at once; recover lost runs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--concurrency",
            type=int,
            default=None,
            help="Runs executed at once (default SPARKTIDE_WORKER_CONCURRENCY).",
        )
        parser.add_argument(
            "--stale-after",
            type=float,
            default=None,
            help="Seconds without a heartbeat before a RUNNING run is recovered "
            "(default SPARKTIDE_STALE_AFTER_SECONDS).",
        )
        parser.add_argument(
            "--sweep-interval",
            type=float,
            default=None,
            help="Seconds between recovery sweeps (default SPARKTIDE_SWEEP_SECONDS).",
        )
        parser.add_argument(
            "--grace",
            type=float,
            default=None,
            help="Seconds in-flight runs get after SIGTERM (default SPARKTIDE_WORKER_GRACE_SECONDS).",
        )
        parser.add_argument(
            "--interval", type=float, default=0.2, help="Polling interval of the queue, seconds."
        )
        parser.add_argument(
            "--batch",
            action="store_true",
            help="Process the queue until it is empty and every claimed run ended, then exit.",
        )
        parser.add_argument(
            "--no-startup-delay",
            action="store_false",
            dest="startup_delay",
            help="Start polling at once (no random delay against a thundering herd).",
        )

    def handle(
        self,
        *args: Any,
        concurrency: int,
        stale_after: float,
        sweep_interval: float,
        grace: float,
        interval: float,
        batch: bool,
        startup_delay: bool,
        **options: Any,
    ) -> None:
        worker = RunWorker(
            concurrency=concurrency,
            interval=interval,
            sweep_seconds=sweep_interval,
            stale_after=stale_after,
            grace_seconds=grace,
            batch=batch,
            startup_delay=startup_delay,
        )
        pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
        if isinstance(pool, dict) and pool.get("max_size", 0) < worker.concurrency + 4:
            self.stderr.write(
                f"warning: SPARKTIDE_DB_POOL_SIZE={pool.get('max_size')} is below concurrency + 4 "
                f"({worker.concurrency + 4}); runs will wait for connections"
            )

        def on_signal(signum: int, frame: FrameType | None) -> None:
            if worker.stopping.is_set():
                sys.stderr.write(f"{signal.strsignal(signum)} again: exiting now\n")
                os._exit(1)
            sys.stderr.write(f"{signal.strsignal(signum)}: draining\n")
            worker.stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        ended = worker.run()
        self.stdout.write(f"worker {worker.worker_id}: {ended}")
        sys.stdout.flush()
        sys.stderr.flush()
        if worker.unfinished:
            # Threads still running handed-back runs: leave without waiting for them.
            os._exit(0)
