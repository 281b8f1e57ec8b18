"""One worker runs many runs at once: runs that wait on their model overlap
instead of queueing behind each other, and each thread gives its database
connection back after its task."""

import pytest
from django.db.models import Max, Min

from runs.models import Run
from runtime.workers import RunWorker

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_worker_with_concurrency_runs_waiting_runs_at_the_same_time(make_run):
    runs = [make_run({"sleep": 1.0}, {"text": f"第{i}"}) for i in range(6)]

    RunWorker(concurrency=6, batch=True, sweep_seconds=3600, interval=0.05).run()

    done = Run.objects.filter(pk__in=[r.pk for r in runs])
    assert set(done.values_list("status", flat=True)) == {Run.Status.COMPLETED}
    # Every run had started before the first one finished: they overlapped.
    bounds = done.aggregate(last_start=Max("started_at"), first_end=Min("completed_at"))
    assert bounds["last_start"] < bounds["first_end"]


def test_a_worker_with_concurrency_one_runs_them_one_after_another(make_run):
    runs = [make_run({"sleep": 0.3}, {"text": f"第{i}"}) for i in range(3)]

    RunWorker(concurrency=1, batch=True, sweep_seconds=3600, interval=0.05).run()

    done = list(Run.objects.filter(pk__in=[r.pk for r in runs]).order_by("started_at"))
    assert [r.status for r in done] == [Run.Status.COMPLETED] * 3
    for earlier, later in zip(done, done[1:], strict=False):
        assert earlier.completed_at <= later.started_at
