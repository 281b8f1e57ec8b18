"""The run-history gate's two statements (``access_run_for_owner(history_permission=True)``
for a request, ``run_for_history_read`` for every read of an open socket) are prepared on
the server once per connection — planning them was most of their cost — and still run on
every check, so a permission removed between two checks is refused at the next one."""

import pytest
from django.db import connection
from guardian.shortcuts import remove_perm

from foundation.errors import SparkTideError
from runs.access import access_run_for_owner, require_run_history, run_for_history_read
from runs.models import Run
from tests import factories

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgres(reason="prepared statements are PostgreSQL's"),
]

RUN_SELECT = 'SELECT "runs_run"."id"'


def prepared_run_statements() -> list[int]:
    """How often each prepared statement reading a run has run on this connection."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return sorted(runs for sql, runs in cursor.fetchall() if sql.startswith(RUN_SELECT))


@pytest.fixture
def run(app, alice):
    return factories.scripted_run(app, alice, [{"text": "好"}], execute=False)


def test_the_request_gate_is_prepared_once_and_checks_on_every_call(run, alice, app):
    for _ in range(3):
        require_run_history(access_run_for_owner(alice, app.slug, run.pk, history_permission=True))
    assert prepared_run_statements() == [3]

    remove_perm("tenancy.view_run_history", alice, app)
    with pytest.raises(SparkTideError) as refused:
        require_run_history(access_run_for_owner(alice, app.slug, run.pk, history_permission=True))
    assert refused.value.code == "BUSINESS_PERMISSION_DENIED"
    assert prepared_run_statements() == [4]  # the same statement, read anew


def test_a_sockets_read_gate_is_prepared_once_and_checks_on_every_read(run, alice, app):
    for _ in range(3):
        read = run_for_history_read(run.pk)
        assert (read.pk, read.app.slug, read.owner_id) == (run.pk, app.slug, alice.pk)
        require_run_history(read)
    assert prepared_run_statements() == [3]

    remove_perm("tenancy.view_run_history", alice, app)
    with pytest.raises(SparkTideError) as refused:
        require_run_history(run_for_history_read(run.pk))
    assert refused.value.code == "BUSINESS_PERMISSION_DENIED"


def test_a_run_gone_between_two_reads_is_does_not_exist(run):
    run_for_history_read(run.pk)
    Run.objects.filter(pk=run.pk).delete()
    with pytest.raises(Run.DoesNotExist):
        run_for_history_read(run.pk)
