import pytest

from knowledge.context import TrustedContext
from tests.remote_server import remote_knowledge  # noqa: F401 - the fixture


@pytest.fixture
def context() -> TrustedContext:
    return TrustedContext(tenant="acme", app="business", user="alice", business_session_id="sess-1")
