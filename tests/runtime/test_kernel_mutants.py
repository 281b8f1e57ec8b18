"""Rules of the run kernel (runs/access.py, runs/lifecycle.py) that only a mutant showed
untested: each test here fails with the mutant it is named after in docs/reliability.md
("The run kernel with the per-test plugin") and passes without it."""

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test.utils import CaptureQueriesContext
from guardian.utils import get_group_obj_perms_model, get_user_obj_perms_model

from runs.access import (
    access_run_for_owner,
    access_run_history,
    require_history_permission,
    run_for_history_read,
)
from runs.lifecycle import finish_run
from runs.models import Run
from tenancy.models import App
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(app, alice):
    return factories.scripted_run(app, alice, [{"text": "好"}], execute=False)


def test_the_history_gate_of_a_request_is_one_query(run, app, alice):
    # access_run_history reads the permission in the run's own query; asked as a
    # plain owner read, the permission would cost a second query.
    access_run_history(alice, app.slug, run.pk)  # content types and the statement, once
    with CaptureQueriesContext(connection) as queries:
        found = access_run_history(alice, app.slug, run.pk)
    assert found.pk == run.pk
    assert len(queries) == 1


@pytest.fixture
def recreate_app_content_type():
    """Gives App's content type a new id, as a flush re-creating the content types does
    (the foreign keys to it are deferred until commit, and the test rolls back; the
    process's content type cache, which would keep the new id, is emptied after it)."""
    yield _recreate_app_content_type
    ContentType.objects.clear_cache()


def _recreate_app_content_type() -> None:
    old = ContentType.objects.get_for_model(App).pk
    new = ContentType.objects.order_by("-pk").values_list("pk", flat=True)[0] + 1
    if connection.vendor == "postgresql":
        # SQLite checks Django's foreign keys at commit already (DEFERRABLE INITIALLY DEFERRED).
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    ContentType.objects.filter(pk=old).update(id=new)
    for model in (Permission, get_user_obj_perms_model(), get_group_obj_perms_model()):
        model._default_manager.filter(content_type_id=old).update(content_type_id=new)
    ContentType.objects.clear_cache()


@pytest.mark.parametrize("gate", ["request", "socket"])
def test_a_statement_compiled_before_the_content_types_were_recreated_is_not_reused(
    gate, run, app, alice, recreate_app_content_type
):
    # The compiled run query holds App's content type id: a process that outlives a
    # re-creation of the content types must compile it again, or the permission it
    # reads names a content type that no longer exists and every owner is refused.
    def read():
        if gate == "request":
            return access_run_for_owner(alice, app.slug, run.pk, history_permission=True)
        return run_for_history_read(run.pk)

    require_history_permission(read())
    recreate_app_content_type()
    require_history_permission(read())


def test_a_run_ended_without_a_detail_is_stored_with_none(run):
    finish_run(run, Run.Status.FAILED, "ENGINE_ERROR")
    run.refresh_from_db()
    assert (run.status, run.reason, run.reason_detail) == (Run.Status.FAILED, "ENGINE_ERROR", "")
