import pytest

from tests import factories


def pytest_collection_modifyitems(config, items):
    """``@pytest.mark.postgres(reason=...)``: the test exercises something only PostgreSQL has
    (a pg function, LISTEN/NOTIFY, SKIP LOCKED, a server-side connection to cut). On SQLite
    it is skipped with that reason, shown in the summary; everything else runs on both."""
    from django.db import connection

    for item in items:
        marker = item.get_closest_marker("postgres")
        if marker is None:
            continue
        reason = marker.kwargs.get("reason")
        if not reason:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.postgres needs a reason")
        if connection.vendor != "postgresql":
            item.add_marker(pytest.mark.skip(reason=f"PostgreSQL only: {reason}"))


@pytest.fixture
def tenant(db):
    return factories.make_tenant("acme", "Acme 资产管理")


@pytest.fixture
def alice(tenant):
    return factories.make_user(tenant, "alice")


@pytest.fixture
def bob(tenant):
    return factories.make_user(tenant, "bob")


@pytest.fixture
def outsider(db):
    other = factories.make_tenant("globex", "Globex")
    return factories.make_user(other, "mallory")


@pytest.fixture
def admin_user(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_superuser(
        "root", "root@example.com", "root-password-123"
    )


@pytest.fixture
def app(tenant, alice, bob):
    return factories.make_app(tenant, "business", members=[alice, bob])
