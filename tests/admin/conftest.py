"""Admin fixtures: one row of every model the admin shows, made the way the product makes it.

The console's fixtures give the acme tenant's knowledge, its researcher agent and a finished
run (answer blocks, attempts, citations, journal); the rest is added here."""

from decimal import Decimal

import pytest
from django.test import Client

from citations.models import CitationReference, NumericHandle
from knowledge.ingest import FactInput
from knowledge.models import Fact, Vocabulary
from tests import factories
from tests.console.conftest import knowledge, make_run, researcher  # noqa: F401  (fixtures)

FIGURE_PAGES = ["北辰医药2026年三季度营收增长12%，主要来自创新药销售。"]


@pytest.fixture
def every_row(request, tenant):
    """At least one row of each model registered in the admin."""
    request.getfixturevalue("researcher")  # the acme knowledge, its agent pinned in the app
    run = request.getfixturevalue("make_run")()
    figures = factories.make_knowledge(tenant, "figures", version="1")
    document = factories.add_document(
        figures,
        FIGURE_PAGES,
        key="figures",
        title="北辰医药营收",
        facts=[FactInput(key="growth", value=Decimal("12"), unit="%", label="营收增长")],
    )
    factories.publish(figures)
    Vocabulary.objects.create(tenant=tenant, entries={"营收": ["营业收入"]})
    citation = CitationReference.objects.filter(run=run).first()
    assert citation is not None
    fact = Fact.objects.get(document=document)
    NumericHandle.objects.create(
        run=run,
        agent_call=citation.agent_call,
        version=figures,
        fact=fact,
        citation=citation,
        ordinal=1,
    )
    from django_tasks_db.models import DBTaskResult, get_date_max

    DBTaskResult.objects.create(
        args_kwargs={"args": [], "kwargs": {}},
        task_path="runtime.tasks.execute",
        backend_name="default",
        run_after=get_date_max(),
        exception_class_path="",
        traceback="",
    )
    return run


@pytest.fixture
def root_client(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client
