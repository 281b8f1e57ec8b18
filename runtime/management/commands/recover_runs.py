from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from runtime.recovery import DEFAULT_STALE_AFTER, recover_runs


class Command(BaseCommand):
    help = "End runs whose worker died, reconciling them from the publication store."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--stale-after",
            type=float,
            default=DEFAULT_STALE_AFTER.total_seconds(),
            help="Seconds without a heartbeat after which a RUNNING run's worker is taken as dead.",
        )

    def handle(self, *args: Any, stale_after: float, **options: Any) -> None:
        results = recover_runs(timedelta(seconds=stale_after))
        for r in results:
            self.stdout.write(
                f"{r.run_id}: {r.status} ({r.committed_blocks} committed blocks, "
                f"{r.unjournaled_commits} commits the journal never recorded, "
                f"{r.unanswered_tool_calls} tool receipts unknown, "
                f"{r.settled_previews} previews never saved)"
            )
        self.stdout.write(f"recovered {len(results)} run(s)")
