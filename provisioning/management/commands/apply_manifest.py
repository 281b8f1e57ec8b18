"""python manage.py apply_manifest FILE.yaml [--dry-run] [--if-new] — format in docs/manifest.md."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from provisioning.manifest import ManifestError, apply_manifest, describe, read_manifest
from tenancy.models import Tenant


class Command(BaseCommand):
    help = "Provision tenants, users, knowledge, agents and apps from a manifest (all or nothing)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the manifest, a YAML file")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="validate and report what would change, then roll everything back",
        )
        parser.add_argument(
            "--if-new",
            action="store_true",
            help="apply only when none of the manifest's tenants exists yet (make demo: the "
            "first start provisions, later starts keep what was changed since)",
        )

    def handle(self, *args: Any, file: str, dry_run: bool, if_new: bool, **options: Any) -> None:
        try:
            manifest = read_manifest(Path(file))
            keys = [tenant.key for tenant in manifest.tenants]
            if if_new and Tenant.objects.filter(key__in=keys).exists():
                self.stdout.write(
                    f"{file}: tenant(s) {', '.join(keys)} already provisioned; not applied again "
                    "(--if-new), so what was changed since is kept"
                )
                return
            result = apply_manifest(manifest, dry_run=dry_run)
        except ManifestError as exc:
            raise CommandError(f"{file}: {exc.path}: {exc.message}")
        describe(result, file, self.stdout.write)
