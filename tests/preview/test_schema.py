"""The preview endpoint and every error code it answers are in the OpenAPI schema;
docs/errors.md documents every ErrorCode."""

from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

from api.citations import PREVIEW_ERRORS
from foundation.errors import ErrorCode, wire_codes

PREVIEW_PATH = "/v1/apps/{app}/runs/{run_id}/citations/{citation_id}/preview"
DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


@pytest.fixture(scope="module")
def operation(schema) -> dict:
    return schema["paths"][PREVIEW_PATH]["get"]


def test_the_schema_has_the_preview_endpoint(schema, operation):
    assert operation["operationId"] == "previewCitation"
    assert list(schema["paths"][PREVIEW_PATH]) == ["get"]
    ok = operation["responses"]["200"]
    assert ok["headers"]["Cache-Control"]
    assert ok["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/CitationPreview"
    }
    fields = schema["components"]["schemas"]["CitationPreview"]["properties"]
    assert set(fields) == {
        "id",
        "knowledgeId",
        "knowledgeVersion",
        "documentId",
        "chunkId",
        "title",
        "sourceRef",
        "content",
        "scope",
        "highlights",
        "location",
    }
    assert "highlights" not in schema["components"]["schemas"]["CitationPreview"]["required"]
    assert "location" not in schema["components"]["schemas"]["CitationPreview"]["required"]


@pytest.mark.parametrize(
    ("status", "code"),
    [(code.status, code) for code, _ in PREVIEW_ERRORS],
)
def test_every_preview_error_is_in_the_schema_under_its_status(operation, status, code):
    response = operation["responses"][str(status)]
    assert response["headers"]["Cache-Control"]
    content = response["content"]["application/problem+json"]
    assert content["schema"] == {"$ref": "#/components/schemas/Problem"}
    examples = {e["value"]["code"]: e["value"] for e in content["examples"].values()}
    assert examples[code]["status"] == status
    assert str(code) in response["description"]


def test_the_schema_lists_every_code_of_the_documented_error_table():
    """DESIGN.md "Preview endpoint" plus credentials and the app status."""
    documented = {
        (401, "AUTHENTICATION_REQUIRED"),
        (404, "RESOURCE_NOT_FOUND"),
        (403, "APP_NOT_ACTIVE"),
        (410, "EVENT_CURSOR_EXPIRED"),
        (403, "BUSINESS_PERMISSION_DENIED"),
        (409, "SECURITY_POLICY_CHANGED"),
        (409, "KNOWLEDGE_ACCESS_CHANGED"),
        (404, "CITATION_NOT_AVAILABLE"),
        (409, "CAPABILITY_UNAVAILABLE"),
        (503, "CAPABILITY_UNAVAILABLE"),
        (403, "KNOWLEDGE_ACCESS_DENIED"),
        (409, "CITATION_SOURCE_CHANGED"),
        (408, "CITATION_PREVIEW_TIMED_OUT"),
        (502, "KNOWLEDGE_SOURCE_ERROR"),
        (503, "KNOWLEDGE_SOURCE_UNAVAILABLE"),
    }
    listed = {(code.status, str(code)) for code, _ in PREVIEW_ERRORS}
    assert listed == documented


def test_the_problem_schema_names_every_error_code(schema):
    codes = schema["components"]["schemas"]["Problem"]["properties"]["code"]
    enum = (
        codes.get("enum") or schema["components"]["schemas"][codes["$ref"].split("/")[-1]]["enum"]
    )
    assert set(enum) == set(wire_codes())


@pytest.mark.parametrize("code", list(ErrorCode))
def test_docs_errors_md_documents_every_error_code_with_its_status(code):
    table = (DOCS / "errors.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith(f"| `{code}` |"))
    assert str(code.status) in row.split("|")[2]


def test_docs_errors_md_documents_app_not_active_with_403():
    table = (DOCS / "errors.md").read_text()
    assert "| `APP_NOT_ACTIVE` | 403 |" in table
