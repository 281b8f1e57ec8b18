from decimal import Decimal

import pytest

from knowledge.ingest import FactInput
from tests import factories
from tests.remote_server import remote_knowledge  # noqa: F401 - the fixture


@pytest.fixture
def knowledge(tenant, app, alice):
    facts = [FactInput(key="revenue_growth", value=Decimal("12.0"), unit="%")]
    return factories.fund_reports(tenant, app, alice, facts=facts)


@pytest.fixture
def make_run(app, alice, knowledge):
    """Create a run of a scripted agent pinned in ``app`` and execute it in-process."""

    def run(*steps, owner=None, **kwargs):
        return factories.scripted_run(app, owner or alice, steps, knowledge=[knowledge], **kwargs)

    return run
