"""CORS: pages on the origins of CORS_ALLOWED_ORIGINS may call /v1/ (and open its
WebSockets); every other origin gets no CORS headers, and nothing outside /v1/ has any."""

import pytest

from tests import factories

ALLOWED = "https://portal.example.com"
REFUSED = "https://evil.example"


@pytest.fixture(autouse=True)
def allow_list(settings):
    settings.CORS_ALLOWED_ORIGINS = [ALLOWED]
    settings.CSRF_TRUSTED_ORIGINS = []
    settings.ALLOWED_HOSTS = ["testserver"]


@pytest.fixture
def alice(db):
    tenant = factories.make_tenant("acme")
    user = factories.make_user(tenant, "alice")
    factories.make_app(tenant, "business", members=[user])
    return user


def preflight(client, origin):
    return client.options(
        "/v1/apps/business/runs",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )


def test_a_preflight_from_an_allowed_origin_may_post_with_a_bearer_token(client, alice):
    response = preflight(client, ALLOWED)
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == ALLOWED
    assert "POST" in response["Access-Control-Allow-Methods"]
    allowed_headers = response["Access-Control-Allow-Headers"].lower()
    assert "authorization" in allowed_headers and "content-type" in allowed_headers
    assert "Access-Control-Allow-Credentials" not in response


def test_a_preflight_from_a_refused_origin_gets_no_cors_headers(client, alice):
    response = preflight(client, REFUSED)
    assert "Access-Control-Allow-Origin" not in response
    assert "Access-Control-Allow-Methods" not in response


def test_an_actual_request_from_an_allowed_origin_is_readable_by_the_page(client, alice):
    response = client.get(
        "/v1/apps/business/runs/run_missing",
        headers={"Origin": ALLOWED, "Authorization": f"Bearer {alice.raw_token}"},
    )
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response["Access-Control-Allow-Origin"] == ALLOWED
    schema = client.get("/v1/schema", headers={"Origin": ALLOWED})
    assert schema.status_code == 200 and schema["Access-Control-Allow-Origin"] == ALLOWED


def test_an_actual_request_from_a_refused_origin_is_not_readable_by_the_page(client, alice):
    response = client.get(
        "/v1/apps/business/runs/run_missing",
        headers={"Origin": REFUSED, "Authorization": f"Bearer {alice.raw_token}"},
    )
    assert response.status_code == 404
    assert "Access-Control-Allow-Origin" not in response


def test_cors_applies_to_v1_only(client, db):
    response = client.get("/console/login/", headers={"Origin": ALLOWED})
    assert response.status_code == 200
    assert "Access-Control-Allow-Origin" not in response


def test_the_cors_allow_list_is_empty_by_default():
    from sparktide import settings as product_settings

    assert product_settings.CORS_ALLOWED_ORIGINS == []


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [(ALLOWED, True), (REFUSED, False), ("https://portal.example.com:8443", False)],
)
def test_the_websocket_origin_check_reads_the_same_allow_list(origin, allowed):
    from delivery.origin import origin_allowed

    assert origin_allowed(origin, "testserver") is allowed
