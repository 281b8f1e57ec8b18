import pytest

from tests import factories


@pytest.fixture
def knowledge(tenant, app, alice):
    return factories.fund_reports(tenant, app, alice)


@pytest.fixture
def make_run(app, alice, knowledge):
    """A real scripted run pinned in ``app``, executed in-process."""

    def run(*steps, owner=None, **kwargs):
        return factories.scripted_run(app, owner or alice, steps, knowledge=[knowledge], **kwargs)

    return run
