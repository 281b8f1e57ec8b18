"""The run-history gate's two statements (``access_run_for_owner(history_permission=True)``
for a request, ``run_for_history_read`` for every read of an open socket) are prepared on
the server once per connection — planning them was most of their cost — and still run on
every check, so a permission removed between two checks is refused at the next one."""

import pytest
from guardian.shortcuts import remove_perm

from foundation.errors import SparkTideError
from runs.access import access_run_for_owner, require_run_history, run_for_history_read
from runs.models import Run
from tests import factories
from tests.prepared import Since

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgres(reason="prepared statements are PostgreSQL's"),
]

RUN_SELECT = 'SELECT "runs_run"."id"'


@pytest.fixture
def run(app, alice):
    return factories.scripted_run(app, alice, [{"text": "好"}], execute=False)


def test_the_request_gate_is_prepared_once_and_checks_on_every_call(run, alice, app):
    since = Since()
    for _ in range(3):
        require_run_history(access_run_for_owner(alice, app.slug, run.pk, history_permission=True))
    assert since.runs(RUN_SELECT) == [3]

    remove_perm("tenancy.view_run_history", alice, app)
    with pytest.raises(SparkTideError) as refused:
        require_run_history(access_run_for_owner(alice, app.slug, run.pk, history_permission=True))
    assert refused.value.code == "BUSINESS_PERMISSION_DENIED"
    assert since.runs(RUN_SELECT) == [4]  # the same statement, read anew


def test_a_sockets_read_gate_is_prepared_once_and_checks_on_every_read(run, alice, app):
    since = Since()
    for _ in range(3):
        read = run_for_history_read(run.pk)
        assert (read.pk, read.app.slug, read.owner_id) == (run.pk, app.slug, alice.pk)
        require_run_history(read)
    assert since.runs(RUN_SELECT) == [3]

    remove_perm("tenancy.view_run_history", alice, app)
    with pytest.raises(SparkTideError) as refused:
        require_run_history(run_for_history_read(run.pk))
    assert refused.value.code == "BUSINESS_PERMISSION_DENIED"


def test_a_run_gone_between_two_reads_is_does_not_exist(run):
    run_for_history_read(run.pk)
    Run.objects.filter(pk=run.pk).delete()
    with pytest.raises(Run.DoesNotExist):
        run_for_history_read(run.pk)
