"""Every /v1 error is problem+json with a documented code, in one language per
request; unknown request fields are refused (issue 10, defect 10)."""

import json

import pytest
from django.http import HttpResponse
from django.test import RequestFactory
from rest_framework.test import APIClient

from runs.models import Run
from sparktide.middleware import ApiProblemMiddleware
from tests import factories
from tests.factories import client_for

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"


@pytest.fixture
def researcher(app, knowledge):
    return factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted({"text": "好。"}),
        knowledge=[knowledge],
        pin_to=[app],
    )


def assert_problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert (body["status"], body["code"]) == (status, code)
    assert body["type"] == f"urn:sparktide:problem:{code.lower().replace('_', '-')}"
    return body


@pytest.mark.parametrize(
    "path",
    ["/v1/nope", "/v1/apps/business/runs/", "/v1/apps/business/runs/run_x/answer/", "/v1/"],
)
def test_an_unknown_v1_path_or_a_trailing_slash_is_a_problem_404(alice, path):
    assert_problem(client_for(alice).get(path), 404, "RESOURCE_NOT_FOUND")


def test_an_unknown_v1_path_is_the_same_404_without_credentials():
    assert_problem(APIClient().get("/v1/nope"), 404, "RESOURCE_NOT_FOUND")


def test_a_method_the_path_does_not_offer_is_a_problem_405(alice, researcher):
    response = client_for(alice).delete("/v1/apps/business/runs")
    assert_problem(response, 405, "METHOD_NOT_ALLOWED")


def test_a_body_over_the_upload_limit_is_a_problem_413(alice, researcher, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    body = json.dumps({"agent": "researcher", "input": "营" * 2000})
    response = client_for(alice).post(
        "/v1/apps/business/runs", body, content_type="application/json"
    )
    assert_problem(response, 413, "REQUEST_TOO_LARGE")
    assert Run.objects.count() == 0


def test_a_wrong_content_type_is_a_problem_415(alice, researcher):
    response = client_for(alice).post(
        "/v1/apps/business/runs", "agent=researcher&input=x", content_type="text/plain"
    )
    assert_problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert Run.objects.count() == 0


def test_json_nested_ten_thousand_deep_is_a_problem_400_not_a_recursion_error(alice, researcher):
    body = '{"agent": "researcher", "input": "x", "deep": ' + "[" * 10_000 + "]" * 10_000 + "}"
    response = client_for(alice).post(
        "/v1/apps/business/runs", body, content_type="application/json"
    )
    problem = assert_problem(response, 400, "INVALID_REQUEST")
    assert "32" in problem["detail"]


def test_brackets_inside_json_strings_do_not_count_as_nesting(alice, researcher):
    body = json.dumps({"agent": "researcher", "input": "[" * 5000 + "{" * 5000})
    response = client_for(alice).post(
        "/v1/apps/business/runs", body, content_type="application/json"
    )
    assert response.status_code == 201, response.content


def test_an_unknown_request_field_is_a_400_naming_the_field(alice, researcher):
    response = client_for(alice).post(
        "/v1/apps/business/runs",
        {"agent": "researcher", "input": "营收？", "version": "2"},
        format="json",
    )
    problem = assert_problem(response, 400, "INVALID_REQUEST")
    assert problem["detail"].startswith("version: ")
    assert Run.objects.count() == 0


@pytest.mark.parametrize("text", ["营收\x00？", "营收\ud800？"])
def test_request_text_the_database_cannot_store_is_a_400_naming_the_field(alice, researcher, text):
    body = json.dumps({"agent": "researcher", "input": text})
    response = client_for(alice).post(
        "/v1/apps/business/runs", body, content_type="application/json"
    )
    problem = assert_problem(response, 400, "INVALID_REQUEST")
    assert problem["detail"].startswith("input: ")
    assert Run.objects.count() == 0


def test_a_422_goes_out_with_its_reason_phrase(alice, researcher):
    response = client_for(alice).post(
        "/v1/apps/business/runs", {"agent": "nobody", "input": "x"}, format="json"
    )
    problem = assert_problem(response, 422, "AGENT_NOT_AVAILABLE")
    assert problem["title"] == response.reason_phrase == "Unprocessable Content"


def test_an_unhandled_error_on_v1_is_internal_error_without_its_text(caplog):
    """The middleware's 500: a code and a neutral detail; the cause goes to the log."""

    def explode(request):
        raise RuntimeError("db at 10.0.0.7:5432 said no")

    middleware = ApiProblemMiddleware(explode)
    request = RequestFactory().get("/v1/apps/business/runs")
    response = middleware.process_exception(request, RuntimeError("db at 10.0.0.7:5432 said no"))
    assert response.status_code == 500
    assert response["Content-Type"] == PROBLEM
    body = json.loads(response.content)
    assert body["code"] == "INTERNAL_ERROR"
    assert "10.0.0.7" not in response.content.decode()
    assert "Traceback" not in response.content.decode()
    assert "10.0.0.7" in caplog.text


def test_a_lost_database_connection_on_v1_is_a_retryable_503_without_a_traceback(caplog):
    """A session cut under a request (failover, restart) is expected: 503
    DATABASE_UNAVAILABLE with Retry-After, a warning in the log, no traceback anywhere.
    (tests/reliability/test_chaos.py's storm cuts real sessions under a real daphne.)"""
    from django.db import InterfaceError, OperationalError

    middleware = ApiProblemMiddleware(lambda request: HttpResponse())
    request = RequestFactory().get("/v1/apps/business/runs")
    for exc in (OperationalError("the connection is closed"), InterfaceError("closed")):
        caplog.clear()
        response = middleware.process_exception(request, exc)
        assert response.status_code == 503
        assert response["Content-Type"] == PROBLEM
        assert response["Retry-After"] == "1"
        assert json.loads(response.content)["code"] == "DATABASE_UNAVAILABLE"
        assert "connection is closed" not in response.content.decode()
        assert [r.levelname for r in caplog.records] == ["WARNING"]
        assert not any(r.exc_info for r in caplog.records)


def test_a_django_html_error_response_on_v1_becomes_a_problem():
    middleware = ApiProblemMiddleware(lambda request: HttpResponse("<h1>Bad</h1>", status=400))
    response = middleware(RequestFactory().get("/v1/apps/business/runs"))
    assert response["Content-Type"] == PROBLEM
    assert json.loads(response.content)["code"] == "INVALID_REQUEST"


def test_pages_outside_v1_keep_their_own_error_pages():
    middleware = ApiProblemMiddleware(lambda request: HttpResponse("<h1>Nope</h1>", status=404))
    response = middleware(RequestFactory().get("/console/nope"))
    assert response.content == b"<h1>Nope</h1>"


# ---------------------------------------------------------------- one language per request


def _missing_agent(alice, **headers):
    return client_for(alice).post(
        "/v1/apps/business/runs", {"input": "x", "sessionId": "s"}, format="json", **headers
    )


def test_details_are_chinese_by_default(alice, researcher):
    problem = assert_problem(_missing_agent(alice), 400, "INVALID_REQUEST")
    assert problem["detail"] == "agent: 该字段是必填项。"
    not_found = assert_problem(client_for(alice).get("/v1/nope"), 404, "RESOURCE_NOT_FOUND")
    assert not_found["detail"] == "资源不存在。"


def test_details_are_english_when_the_request_asks_for_it(alice, researcher):
    problem = assert_problem(
        _missing_agent(alice, HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9"), 400, "INVALID_REQUEST"
    )
    assert problem["detail"] == "agent: This field is required."
    not_found = client_for(alice).get("/v1/nope", HTTP_ACCEPT_LANGUAGE="en")
    assert assert_problem(not_found, 404, "RESOURCE_NOT_FOUND")["detail"] == (
        "The resource does not exist."
    )


def test_one_response_family_speaks_one_language(alice, researcher):
    """Our own messages and DRF's in the same body: both English, or both Chinese."""
    body = {"agent": "researcher", "input": "   ", "extra": 1}
    english = client_for(alice).post(
        "/v1/apps/business/runs", body, format="json", HTTP_ACCEPT_LANGUAGE="en"
    )
    assert assert_problem(english, 400, "INVALID_REQUEST")["detail"] == "extra: Unknown field."
    chinese = client_for(alice).post("/v1/apps/business/runs", body, format="json")
    assert assert_problem(chinese, 400, "INVALID_REQUEST")["detail"] == "extra: 未知字段。"
    blank = {"agent": "researcher", "input": "   "}
    detail = assert_problem(
        client_for(alice).post(
            "/v1/apps/business/runs", blank, format="json", HTTP_ACCEPT_LANGUAGE="en"
        ),
        400,
        "INVALID_REQUEST",
    )["detail"]
    assert detail == "input: Must not be blank."


def test_codes_are_never_translated(alice):
    codes = {
        client_for(alice).get("/v1/nope", HTTP_ACCEPT_LANGUAGE=language).json()["code"]
        for language in ("en", "zh-hans", "fr")
    }
    assert codes == {"RESOURCE_NOT_FOUND"}
