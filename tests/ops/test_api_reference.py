"""The offline API reference: every /v1 operation lists its errors as problem+json,
the served schema is a valid OpenAPI document, Swagger UI and Redoc load only local
files, and docs/api.md names every operation and error code."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator
from openapi_spec_validator import validate

from foundation.errors import ErrorCode

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema):
    for path, ops in schema["paths"].items():
        for method, operation in ops.items():
            yield path, method, operation


def test_the_reference_has_every_v1_operation(schema):
    ids = {op["operationId"] for path, _, op in operations(schema) if path.startswith("/v1/")}
    assert {"createRun", "getRun", "listRunEvents", "previewCitation", "cancelRun"} <= ids


def test_every_v1_operation_lists_its_errors_as_problem_json(schema):
    checked = 0
    for path, method, operation in operations(schema):
        assert path.startswith("/v1/"), path
        errors = {s: r for s, r in operation["responses"].items() if s[0] in "45"}
        assert "401" in errors, (method, path)
        assert "404" in errors, (method, path)
        for status, response in errors.items():
            content = response["content"]["application/problem+json"]
            assert content["schema"] == {"$ref": "#/components/schemas/Problem"}
            examples = list(content["examples"].values())
            assert examples, (method, path, status)
            for example in examples:
                code = example["value"]["code"]
                assert code in ErrorCode.__members__, code
                assert example["value"]["status"] == int(status)
                assert f"`{code}`" in response["description"]
            checked += 1
    assert checked >= 15


def test_an_operation_missing_from_the_error_table_still_gets_errors():
    from sparktide.ops.apidocs import error_responses

    result = {"paths": {"/v1/apps/{app}/new": {"get": {"operationId": "brandNew"}}}}
    responses = error_responses(result, None, None, True)["paths"]["/v1/apps/{app}/new"]["get"][
        "responses"
    ]
    assert {"400", "401", "404"} <= set(responses)
    assert result["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]


def test_the_served_schema_is_a_valid_openapi_document(client, db):
    response = client.get("/v1/schema", headers={"Accept": "application/vnd.oai.openapi+json"})
    assert response.status_code == 200
    document = json.loads(response.content)
    validate(document)
    assert document["openapi"].startswith("3.")
    assert "Problem" in document["components"]["schemas"]


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self.inline_scripts = 0
        self.styles = 0
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href", "spec-url"):
            if attrs.get(name):
                self.urls.append(attrs[name])
        if tag == "script" and not attrs.get("src"):
            self.inline_scripts += 1
        if tag == "style":
            self.styles += 1


@pytest.mark.parametrize("page", ["/v1/docs", "/v1/redoc"])
def test_the_documentation_pages_reference_only_local_files_that_exist(client, db, page):
    response = client.get(page)
    assert response.status_code == 200
    parser = Links()
    parser.feed(response.content.decode())
    assert parser.urls, "the page loads nothing"
    assert parser.inline_scripts == 0 and parser.styles == 0
    for url in parser.urls:
        assert url.startswith("/"), url  # no scheme, no host: nothing from a CDN
        assert not url.startswith("//"), url
        assert client.get(url).status_code == 200, url
    assert "googleapis" not in response.content.decode()
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-eval" not in csp


def test_the_swagger_ui_script_points_at_the_local_schema(client, db):
    parser = Links()
    parser.feed(client.get("/v1/docs").content.decode())
    script = next(u for u in parser.urls if "script" in u)
    body = client.get(script).content.decode()
    assert "/v1/schema" in body
    assert not re.search(r"https?://", body.replace("http://www.w3.org", ""))


def test_the_reference_pages_need_no_credentials(client, db):
    assert client.get("/v1/docs").status_code == 200
    assert client.get("/v1/schema").status_code == 200


def test_docs_api_md_names_every_operation_and_error_code(schema):
    text = (ROOT / "docs" / "api.md").read_text()
    for path, method, operation in operations(schema):
        assert f"`{operation['operationId']}`" in text, operation["operationId"]
        assert f"{method.upper()} {path}" in text, (method, path)
    for code in ErrorCode:
        assert f"`{code}`" in text, code


MARKDOWN_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def documents():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("document", documents(), ids=lambda p: p.name)
def test_every_link_of_the_readme_and_docs_stays_inside_the_repository(document):
    text = document.read_text()
    for target in MARKDOWN_LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        assert (document.parent / target).resolve().exists(), f"{document.name} → {target}"
    for outside in ("DESIGN.md", "API.md", "STYLE.md", "/work/shared", "seeds/"):
        assert outside not in text, f"{document.name} refers to {outside}, not in the repository"


# --- what each operation answers, against what the reference says ---------------------------

RUN_OPERATIONS = {
    "getRun": ("get", ""),
    "listRunEvents": ("get", "/events"),
    "getRunAnswer": ("get", "/answer"),
    "createEventTicket": ("post", "/events/ticket"),
    "cancelRun": ("post", "/cancel"),
    "listRunFeedback": ("get", "/feedback"),
    "putRunFeedback": ("put", "/feedback"),
}


def _documented(schema, operation_id: str) -> set[tuple[int, str]]:
    (operation,) = [op for _, _, op in operations(schema) if op["operationId"] == operation_id]
    return {
        (int(status), example["value"]["code"])
        for status, response in operation["responses"].items()
        if status[0] in "45"
        for example in response["content"]["application/problem+json"]["examples"].values()
    }


def _answers(run, owner) -> dict[str, tuple[int, str]]:
    from tests.factories import client_for

    client = client_for(owner)
    seen = {}
    for operation_id, (method, suffix) in RUN_OPERATIONS.items():
        response = getattr(client, method)(f"/v1/apps/{run.app.slug}/runs/{run.pk}{suffix}")
        if response.status_code >= 400:
            seen[operation_id] = (response.status_code, response.json()["code"])
    return seen


@pytest.mark.django_db
@pytest.mark.parametrize("situation", ["suspended", "no_history", "archived"])
def test_every_error_a_run_operation_answers_is_in_the_reference(schema, situation):
    """Each run operation is asked in a situation that refuses it; whatever it answers
    (status and code) must be listed for that operation in the served reference."""
    from django.utils import timezone
    from guardian.shortcuts import remove_perm

    from runs.models import Run
    from tests import factories

    tenant = factories.make_tenant()
    owner = factories.make_user(tenant)
    app = factories.make_app(tenant, members=[owner])
    run = factories.scripted_run(app, owner, [{"answer": "好。"}])
    if situation == "suspended":
        app.status = "SUSPENDED"
        app.save(update_fields=["status"])
    elif situation == "no_history":
        remove_perm("tenancy.view_run_history", owner, app)
    else:
        Run.objects.filter(pk=run.pk).update(archived_at=timezone.now())
    seen = _answers(run, owner)
    assert seen, "the situation refused nothing"
    undocumented = {
        operation_id: answer
        for operation_id, answer in seen.items()
        if answer not in _documented(schema, operation_id)
    }
    assert undocumented == {}


def test_the_events_limit_the_docs_give_is_the_one_the_api_accepts(client, db):
    """docs/api.md says 1–1000; a page of 1000 is accepted and 1001 is a 400."""
    from api.selectors import MAX_EVENTS_PAGE
    from runs.models import Run
    from tests import factories

    assert "`&limit=N` (1–1000, default 100)" in (ROOT / "docs" / "api.md").read_text()
    assert MAX_EVENTS_PAGE == 1000
    tenant = factories.make_tenant()
    owner = factories.make_user(tenant)
    app = factories.make_app(tenant, members=[owner])
    run = factories.scripted_run(app, owner, [{"answer": "好。"}])
    api = factories.client_for(owner)
    events = f"/v1/apps/{app.slug}/runs/{run.pk}/events"
    assert api.get(events, {"limit": 1000}).status_code == 200
    refused = api.get(events, {"limit": 1001})
    assert refused.status_code == 400 and refused.json()["code"] == "INVALID_REQUEST"
    assert Run.objects.filter(pk=run.pk).exists()
