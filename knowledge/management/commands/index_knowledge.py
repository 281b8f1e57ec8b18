"""python manage.py index_knowledge — docs/retrieval.md ("Statistics")."""

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction
from django.db.models import Q

from knowledge.models import (
    Knowledge,
    KnowledgeVersion,
    VersionIndex,
    VersionTerm,
    build_version_index,
)
from knowledge.ranking import store_missing_impacts


class Command(BaseCommand):
    help = (
        "Store the search statistics of every PUBLISHED managed version that has none "
        "(publishing computes them; a version published by a bulk update did not), and the "
        "term impacts of versions published before they were stored (migrations 0009, 0014). "
        "Idempotent: a second run stores nothing."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        published = (
            KnowledgeVersion.objects.filter(status=KnowledgeVersion.Status.PUBLISHED)
            .exclude(knowledge__type=Knowledge.Type.REMOTE)
            .select_related("knowledge__tenant")
            .order_by("pk")
        )
        built = 0
        for version in published.exclude(pk__in=VersionIndex.objects.values("version_id")):
            # One version a transaction: a search sees its statistics whole or not at all.
            with transaction.atomic():
                built += build_version_index(version)
            self.stdout.write(f"indexed {version.knowledge.tenant.key}/{version.label}")
        self.stdout.write(self.style.SUCCESS(f"{built} version(s) indexed"))

        unbounded = published.filter(
            pk__in=VersionTerm.objects.filter(
                Q(impact__isnull=True) | Q(single__isnull=True)
            ).values("version_id")
        )
        total = unbounded.count()
        for position, version in enumerate(unbounded, 1):
            with transaction.atomic():
                terms = store_missing_impacts(version)
            self.stdout.write(
                f"[{position}/{total}] impacts of {version.knowledge.tenant.key}/"
                f"{version.label}: {terms} term(s)"
            )
        self.stdout.write(self.style.SUCCESS(f"{total} version(s) given term impacts"))
