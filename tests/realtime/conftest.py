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
    version = factories.make_knowledge(tenant, "fund-reports", version="2026-10")
    version.public_doc = factories.add_document(
        version,
        ["北辰医药2026年三季度营收增长12%，主要来自创新药销售。"],
        key="report-a",
        title="北辰医药 2026 年三季度报告",
    )
    version.private_doc = factories.add_document(
        version,
        ["内部投研纪要：北辰医药营收预测上调，仅限分析师阅读。"],
        key="memo",
        title="内部投研纪要",
        readers=[alice],
    )
    factories.publish(version)
    factories.lease(app, version)
    return version


@pytest.fixture
def make_run(app, alice, knowledge):
    """A run of a scripted agent pinned in ``app``; executed in-process unless execute=False."""
    from runs.engine import execute_run
    from runs.models import Run
    from runs.services import start_run

    def run(*steps, owner=None, key="researcher", execute=True):
        agent_version = factories.make_agent(
            app.tenant, key, model=factories.scripted(*steps), knowledge=[knowledge], pin_to=[app]
        )
        created = start_run(
            user=owner or alice,
            app=app,
            agent_key=agent_version.agent.key,
            input="北辰医药营收如何？",
        )
        if execute:
            execute_run(created.pk)
        # Related rows loaded now: async tests must not load them lazily.
        return Run.objects.select_related("app", "tenant", "owner").get(pk=created.pk)

    return run


@pytest.fixture
def staff(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(
        "console-admin", password="pw-unused-123", is_staff=True
    )
