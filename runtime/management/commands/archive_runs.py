from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from runtime.archive import DEFAULT_BATCH_SIZE, BatchDone, archive_runs, count_due


class Command(BaseCommand):
    help = (
        "Archive finished runs past their app's retention: clear their private citation "
        "references (digests, retrieval parameters); the public run stays. Idempotent."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch-size",
            type=int,
            default=DEFAULT_BATCH_SIZE,
            help=f"Runs archived per transaction (default {DEFAULT_BATCH_SIZE}).",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Only count the runs that are due, per app; change nothing.",
        )

    def handle(self, *args: Any, batch_size: int, dry_run: bool, **options: Any) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        if dry_run:
            due = count_due()
            for slug, count in due.items():
                self.stdout.write(f"{slug}: {count} run(s) due")
            self.stdout.write(f"dry run: {sum(due.values())} run(s) would be archived")
            return

        def progress(done: BatchDone) -> None:
            self.stdout.write(
                f"batch {done.batch} ({done.app}): archived {done.runs} run(s), "
                f"cleared {done.references} reference(s); {done.total} so far"
            )

        summary = archive_runs(batch_size=batch_size, progress=progress)
        self.stdout.write(
            f"archived {summary.runs} run(s) in {summary.batches} batch(es), "
            f"cleared {summary.references} reference(s)"
        )
