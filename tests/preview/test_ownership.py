"""Only the run's owner may preview its sources. Everyone else — a platform admin
who is not the owner, another member, another tenant — gets exactly what a missing
run or app gets: the same 404, the same body, the same headers, the same queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import client_for
from tests.preview.conftest import preview_url

pytestmark = pytest.mark.django_db


def answer(client, url):
    """Status, body bytes and headers of a response, plus the queries it cost."""
    client.get(url)  # warm up: a fresh token's last_used_at refresh is not part of it
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    return response, len(queries)


def fingerprint(response) -> tuple:
    return response.status_code, response.content, sorted(response.headers.items())


@pytest.fixture
def missing_run(cited, alice):
    """The answer to a run ID that does not exist, asked by the owner of the app."""
    return answer(client_for(alice), preview_url("run_" + "x" * 24, cited.reference.pk))


def assert_same_as_missing(response_and_queries, missing_run):
    response, queries = response_and_queries
    missing, missing_queries = missing_run
    assert response.status_code == 404
    assert response.json()["code"] == "RESOURCE_NOT_FOUND"
    assert response["Cache-Control"] == "no-store"
    assert fingerprint(response) == fingerprint(missing)
    assert queries == missing_queries


def test_a_missing_run_is_resource_not_found(missing_run):
    response, _ = missing_run
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response["Cache-Control"] == "no-store"
    assert response.json() == {
        "type": "urn:sparktide:problem:resource-not-found",
        "title": "Not Found",
        "status": 404,
        "code": "RESOURCE_NOT_FOUND",
        "detail": "资源不存在。",
    }


def test_a_platform_admin_who_is_not_the_owner_gets_the_missing_run_answer(
    cited, admin, missing_run
):
    assert_same_as_missing(answer(client_for(admin), cited.url), missing_run)


def test_another_member_of_the_app_gets_the_missing_run_answer(cited, bob, missing_run):
    assert_same_as_missing(answer(client_for(bob), cited.url), missing_run)


def test_a_user_of_another_tenant_gets_the_missing_run_answer(cited, outsider, missing_run):
    assert_same_as_missing(answer(client_for(outsider), cited.url), missing_run)


def test_a_missing_app_gets_the_missing_run_answer(cited, alice, missing_run):
    url = preview_url(cited.run.pk, cited.reference.pk, app="no-such-app")
    assert_same_as_missing(answer(client_for(alice), url), missing_run)


def test_the_run_under_another_app_of_the_same_tenant_gets_the_missing_run_answer(
    cited, alice, tenant, missing_run
):
    from tests import factories

    factories.make_app(tenant, "other-app", members=[alice])
    url = preview_url(cited.run.pk, cited.reference.pk, app="other-app")
    assert_same_as_missing(answer(client_for(alice), url), missing_run)


def test_a_malformed_app_slug_gets_the_missing_run_answer(cited, alice, missing_run):
    url = preview_url(cited.run.pk, cited.reference.pk, app="no such app!")
    assert_same_as_missing(answer(client_for(alice), url), missing_run)


def test_an_outsider_asking_for_a_uri_citation_learns_nothing_more(cited, outsider, missing_run):
    """Ownership is checked before the citation ID: a non-owner never reaches it."""
    url = preview_url(cited.run.pk, "https%3A%2F%2Fevil.example%2Fx")
    assert_same_as_missing(answer(client_for(outsider), url), missing_run)


def test_a_non_owner_does_not_learn_that_the_app_is_suspended(cited, bob, app, missing_run):
    from tenancy.models import App

    App.objects.filter(pk=app.pk).update(status=App.Status.SUSPENDED)
    assert_same_as_missing(answer(client_for(bob), cited.url), missing_run)


def test_the_owner_still_gets_the_excerpt(cited, alice):
    assert client_for(alice).get(cited.url).status_code == 200


@pytest.mark.parametrize(("run_id", "slug"), [("run_%00x", "business"), (None, "bu%00siness")])
def test_a_nul_byte_in_the_path_gets_the_missing_run_answer(
    cited, alice, missing_run, run_id, slug
):
    """PostgreSQL cannot even be asked about a NUL: still the same 404, not a 500."""
    url = preview_url(run_id or cited.run.pk, cited.reference.pk, app=slug)
    assert_same_as_missing(answer(client_for(alice), url), missing_run)
