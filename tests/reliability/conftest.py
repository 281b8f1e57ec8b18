import itertools

import pytest
from django.db import connection

from tests import factories


@pytest.fixture
def knowledge(tenant, app, alice):
    return factories.fund_reports(
        tenant, app, alice, pages=[factories.REPORT_PAGES[0].split("\n")[0]], source_version=""
    )


@pytest.fixture
def make_run(app, alice, knowledge):
    """A QUEUED run of a scripted agent (its task enqueued), not executed here."""

    keys = itertools.count(1)

    def run(*steps, owner=None, key=None, **kwargs):
        key = key or f"agent-{next(keys)}"
        kwargs.setdefault("execute", False)
        return factories.scripted_run(
            app, owner or alice, steps, knowledge=[knowledge], key=key, **kwargs
        )

    return run


@pytest.fixture
def postgres():
    factories.require(connection.vendor == "postgresql", "needs PostgreSQL (set DATABASE_URL)")


@pytest.fixture
def redis_and_postgres(postgres, settings):
    factories.require(bool(settings.REDIS_URL), "needs REDIS_URL")
