import uuid

import pytest

from tests import factories


@pytest.fixture(autouse=True)
def close_connections_as_in_production(monkeypatch):
    """Let database_sync_to_async close its connections after each call, as it does in production.

    Channels' test communicator swaps that for a no-op so TestCase transactions
    survive; these tests use real transactions, and the no-op would leak one
    pooled connection per worker thread of every test's event loop.
    """
    from django.db import close_old_connections

    monkeypatch.setattr("channels.testing.application.no_op", close_old_connections)


@pytest.fixture(autouse=True)
def own_channel_layer(settings):
    """A channel prefix of this test's own, so parallel runs never wake each other.

    Redis when REDIS_URL is set (as make test does), in-memory otherwise.
    """
    settings.SPARKTIDE_TEST_CHANNEL_PREFIX = f"sparktide-rt-{uuid.uuid4().hex[:12]}"
    if settings.REDIS_URL:
        settings.CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {
                    "hosts": [settings.REDIS_URL],
                    "prefix": settings.SPARKTIDE_TEST_CHANNEL_PREFIX,
                },
            }
        }
    else:
        settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.fixture
def knowledge(tenant, app, alice):
    return factories.fund_reports(
        tenant, app, alice, pages=[factories.REPORT_PAGES[0].split("\n")[0]], source_version=""
    )


@pytest.fixture
def make_run(app, alice, knowledge):
    """A run of a scripted agent pinned in ``app``; executed in-process unless execute=False."""

    def run(*steps, owner=None, **kwargs):
        return factories.scripted_run(app, owner or alice, steps, knowledge=[knowledge], **kwargs)

    return run


@pytest.fixture
def staff(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(
        "console-admin", password="pw-unused-123", is_staff=True
    )
