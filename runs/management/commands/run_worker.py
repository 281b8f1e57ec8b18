"""The task worker: recovers runs left by dead workers, then runs db_worker."""

from datetime import timedelta

from django.core.management import call_command
from django.core.management.base import BaseCommand

from runs.runtime.recovery import DEFAULT_STALE_AFTER, recover_runs


class Command(BaseCommand):
    help = "Recover orphaned runs, then process run tasks (django_tasks_db db_worker)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--stale-after", type=float, default=DEFAULT_STALE_AFTER.total_seconds()
        )
        parser.add_argument(
            "--interval", type=float, default=0.2, help="Polling interval of the worker, seconds."
        )
        parser.add_argument("--batch", action="store_true", help="Process the queue once and exit.")
        parser.add_argument(
            "--no-startup-delay",
            action="store_false",
            dest="startup_delay",
            help="Start polling at once (no random delay against a thundering herd).",
        )

    def handle(
        self,
        *args,
        stale_after: float,
        interval: float,
        batch: bool,
        startup_delay: bool,
        **options,
    ):
        for r in recover_runs(timedelta(seconds=stale_after)):
            self.stdout.write(f"recovered {r.run_id}: {r.status}")
        worker_args = ["--interval", str(interval), "--no-reload"]
        if batch:
            worker_args.append("--batch")
        if not startup_delay:
            worker_args.append("--no-startup-delay")
        call_command("db_worker", *worker_args)
