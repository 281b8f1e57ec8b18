"""python manage.py apply_manifest FILE.yaml [--dry-run] — format in docs/manifest.md."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from provisioning.manifest import ManifestError, apply_manifest, describe, read_manifest


class Command(BaseCommand):
    help = "Provision tenants, users, knowledge, agents and apps from a manifest (all or nothing)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the manifest, a YAML file")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="validate and report what would change, then roll everything back",
        )

    def handle(self, *args: Any, file: str, dry_run: bool, **options: Any) -> None:
        try:
            result = apply_manifest(read_manifest(Path(file)), dry_run=dry_run)
        except ManifestError as exc:
            raise CommandError(f"{file}: {exc.path}: {exc.message}")
        describe(result, file, self.stdout.write)
