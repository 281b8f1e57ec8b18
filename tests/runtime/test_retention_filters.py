"""The retention rule has one home (runs/retention.py): what the archiver takes
(``past_retention``, through runtime/archive.py ``due_for_archive``) and what history keeps
(``within_retention``) are the two sides of ``is_expired``, at the cutoff itself too."""

from datetime import timedelta

import pytest
from django.utils import timezone

from runs.models import Run
from runs.retention import is_expired, past_retention, retention_cutoff, within_retention
from runtime.archive import due_for_archive
from tests import factories

pytestmark = pytest.mark.django_db


def test_every_run_is_kept_or_due_exactly_as_is_expired_says_around_the_cutoff(app, alice):
    template = factories.scripted_run(app, alice, [{"text": "段"}], key="aged", execute=False)
    now = timezone.now()
    cutoff = retention_cutoff(app, now)
    ages = [timedelta(days=1), timedelta(microseconds=1), timedelta(0)]
    ages += [-age for age in ages[:2]]  # before the cutoff, at it, after it
    runs = []
    for age in ages:
        for archived in (None, now):
            run = Run.objects.get(pk=template.pk)
            run.pk = None
            run.id = None
            run.status = Run.Status.COMPLETED
            run.archived_at = archived
            run.save(force_insert=True)  # a new ID from the field's default
            Run.objects.filter(pk=run.pk).update(created_at=cutoff + age)
            runs.append(Run.objects.select_related("app").get(pk=run.pk))
    ids = [run.pk for run in runs]
    kept = set(
        Run.objects.filter(within_retention(app, now), pk__in=ids).values_list("pk", flat=True)
    )
    past = set(
        Run.objects.filter(past_retention(app, now), pk__in=ids).values_list("pk", flat=True)
    )
    due = set(due_for_archive(app, now).filter(pk__in=ids).values_list("pk", flat=True))

    for run in runs:
        expired = is_expired(run, now)
        assert (run.pk in kept) is not expired, (run.created_at - cutoff, run.archived_at)
        # Not archived yet: past its window exactly when expired, and then due.
        assert (run.pk in past) is (expired and run.archived_at is None), run.created_at - cutoff
    assert due == past
    assert not kept & past
    # Both sides are there: the cutoff itself is kept (``<`` expires), a microsecond less is not.
    assert len(kept) == 3 and len(past) == 2
