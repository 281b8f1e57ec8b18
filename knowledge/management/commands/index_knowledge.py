"""python manage.py index_knowledge — docs/retrieval.md ("Statistics")."""

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from knowledge.models import Knowledge, KnowledgeVersion, VersionIndex, build_version_index


class Command(BaseCommand):
    help = (
        "Store the search statistics of every PUBLISHED managed version that has none "
        "(publishing computes them; a version published by a bulk update did not)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        missing = (
            KnowledgeVersion.objects.filter(status=KnowledgeVersion.Status.PUBLISHED)
            .exclude(knowledge__type=Knowledge.Type.REMOTE)
            .exclude(pk__in=VersionIndex.objects.values("version_id"))
            .select_related("knowledge__tenant")
        )
        built = 0
        for version in missing:
            # One version a transaction: a search sees its statistics whole or not at all.
            with transaction.atomic():
                built += build_version_index(version)
            self.stdout.write(f"indexed {version.knowledge.tenant.key}/{version.label}")
        self.stdout.write(self.style.SUCCESS(f"{built} version(s) indexed"))
