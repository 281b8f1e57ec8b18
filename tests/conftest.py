import pytest

from tests import factories


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
