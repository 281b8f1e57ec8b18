"""Prometheus metrics at ``/metrics`` when ``SPARKTIDE_METRICS`` is on (docs/operations.md).

Two kinds of figures:

- read from the database at every scrape, so the same in every process:
  ``sparktide_runs{status}`` (runs by status), ``sparktide_task_queue_depth``
  (tasks waiting for a worker) and ``sparktide_publication_attempts{outcome}``;
- counted where the event happens (foundation/observability.py):
  ``sparktide_runs_ended_total``, ``sparktide_publication_outcomes_total``,
  ``sparktide_preview_outcomes_total{code}``, ``sparktide_open_websockets``.
  These are per process, unless ``PROMETHEUS_MULTIPROC_DIR`` names a directory
  shared by every process of the machine (prometheus-client's multi-process mode),
  in which case this endpoint answers their sum.
"""

import os
from collections.abc import Iterator

from django.conf import settings
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django_tasks_db.models import DBTaskResult
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily

from publication.models import PublicationAttempt
from runs.models import Run


class DatabaseCollector:
    """Figures every process agrees on, read at scrape time."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        runs = GaugeMetricFamily("sparktide_runs", "Runs by status.", labels=["status"])
        counts = dict(Run.objects.values_list("status").annotate(n=Count("pk")).order_by())
        for status in Run.Status.values:
            runs.add_metric([status], counts.get(status, 0))
        yield runs
        attempts = GaugeMetricFamily(
            "sparktide_publication_attempts",
            "Publication attempts kept in the database, by outcome.",
            labels=["outcome"],
        )
        rows = PublicationAttempt.objects.values_list("outcome").annotate(n=Count("pk"))
        for outcome, n in rows.order_by():
            attempts.add_metric([outcome], n)
        yield attempts
        yield GaugeMetricFamily(
            "sparktide_task_queue_depth",
            "Tasks ready and waiting for a worker.",
            value=DBTaskResult.objects.ready().count(),
        )


_DATABASE = CollectorRegistry(auto_describe=False)
_DATABASE.register(DatabaseCollector())


def _process_registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return registry
    return REGISTRY


@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    if not settings.SPARKTIDE_METRICS:
        raise Http404("metrics are off")
    body = generate_latest(_process_registry()) + generate_latest(_DATABASE)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
