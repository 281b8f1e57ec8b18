"""The preview of a REMOTE citation: one fresh signed call with the original query
and topK and a freshly built trusted context, against a real local HTTP server;
the original item must come back with the same version and digest."""

import logging
import time

import pytest

from foundation.errors import ErrorCode
from knowledge.text import snippet_digest
from tests.factories import client_for
from tests.preview.conftest import REMOTE_CONTENT, SESSION_ID
from tests.remote_server import DEFAULT_SECRET, remote_item

pytestmark = pytest.mark.django_db


def preview(cited, user):
    return client_for(user).get(cited.url)


def assert_problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert body["code"] == code
    # Never the excerpt, the title or the item ID, never the endpoint's host.
    for secret in (REMOTE_CONTENT, "客户拜访纪要", "crm-1", "127.0.0.1"):
        assert secret not in str(body)
    return body


def test_the_owner_gets_the_re_fetched_remote_excerpt(cited_remote, alice, remote_knowledge):
    response = preview(cited_remote, alice)

    assert response.status_code == 200, response.content
    assert response["Cache-Control"] == "no-store"
    assert response.json() == {
        "id": cited_remote.reference.pk,
        "knowledgeId": "crm",
        "knowledgeVersion": "1",
        "documentId": "crm-1",
        "chunkId": "crm-1",
        "title": "客户拜访纪要",
        "sourceRef": {
            "type": "remote",
            "id": "crm-1",
            "version": "7",
            "page": 2,
            "locator": {"start": 10, "end": 34},
            "uri": remote_knowledge.url_for("/documents/crm-1"),
        },
        "content": REMOTE_CONTENT,
        "scope": "RETRIEVED_EXCERPT",
        # The answer quoted 拜访纪要; the page is the source's, the paragraph unknown.
        "highlights": [{"start": 2, "end": 6}],
        "location": {"page": 2},
    }


def test_the_re_fetch_sends_the_original_query_and_top_k_with_a_fresh_trusted_context(
    cited_remote, alice, remote_knowledge
):
    preview(cited_remote, alice)

    (request,) = remote_knowledge.requests
    assert request.path == "/retrieve"
    assert request.signature_is_valid(DEFAULT_SECRET)
    assert request.json == {
        "query": "营收",
        "topK": 2,
        "knowledgeId": "crm",
        "knowledgeVersion": "1",
        "context": {
            "tenant": "acme",
            "app": "business",
            "user": "alice",
            "businessSessionId": SESSION_ID,
        },
    }


def test_every_preview_asks_the_source_again_and_never_visits_the_uri(
    cited_remote, alice, remote_knowledge
):
    for _ in range(3):
        assert preview(cited_remote, alice).status_code == 200
    assert len(remote_knowledge.requests_to("/retrieve")) == 3
    assert remote_knowledge.requests_to("/documents/crm-1") == []


def test_changed_content_under_the_same_version_is_source_changed(
    cited_remote, alice, remote_knowledge
):
    remote_knowledge.change_item("crm-1", content="客户拜访纪要：营收下降。")
    assert_problem(preview(cited_remote, alice), 409, "CITATION_SOURCE_CHANGED")


def test_whitespace_around_the_same_content_is_not_a_change(cited_remote, alice, remote_knowledge):
    """The digest is over the normalized snippet (NFC, line endings, trimmed)."""
    remote_knowledge.change_item("crm-1", content=f"  {REMOTE_CONTENT}\r\n")
    response = preview(cited_remote, alice)
    assert response.status_code == 200
    assert snippet_digest(response.json()["content"]) == cited_remote.reference.digest


def test_an_item_the_source_no_longer_returns_is_not_available(
    cited_remote, alice, remote_knowledge
):
    remote_knowledge.drop_item("crm-1")
    assert_problem(preview(cited_remote, alice), 404, "CITATION_NOT_AVAILABLE")


def test_an_item_ranked_out_of_the_original_top_k_is_not_available(
    cited_remote, alice, remote_knowledge
):
    remote_knowledge.set_items(
        [
            remote_item("crm-9", "新条目一", version="1"),
            remote_item("crm-8", "新条目二", version="1"),
            remote_item("crm-1", REMOTE_CONTENT, version="7"),
        ]
    )
    assert_problem(preview(cited_remote, alice), 404, "CITATION_NOT_AVAILABLE")


def test_a_changed_item_version_is_not_available(cited_remote, alice, remote_knowledge):
    remote_knowledge.change_item("crm-1", version="8")
    assert_problem(preview(cited_remote, alice), 404, "CITATION_NOT_AVAILABLE")


@pytest.mark.timing
def test_a_slow_source_is_preview_timed_out(cited_remote, alice, remote_knowledge, settings):
    settings.SPARKTIDE_REMOTE_TIMEOUT_CAP = 0.3
    remote_knowledge.sleep(5)
    started = time.monotonic()
    response = preview(cited_remote, alice)
    assert_problem(response, 408, "CITATION_PREVIEW_TIMED_OUT")
    assert time.monotonic() - started < 2.5
    assert len(remote_knowledge.requests) == 1  # no retry


def test_a_source_answering_500_is_knowledge_source_error(cited_remote, alice, remote_knowledge):
    remote_knowledge.fail(500)
    assert_problem(preview(cited_remote, alice), 502, "KNOWLEDGE_SOURCE_ERROR")
    assert len(remote_knowledge.requests) == 1  # no retry


def test_a_malformed_answer_is_knowledge_source_error(cited_remote, alice, remote_knowledge):
    remote_knowledge.respond_raw("<html>not json</html>")
    assert_problem(preview(cited_remote, alice), 502, "KNOWLEDGE_SOURCE_ERROR")


def test_a_redirect_is_knowledge_source_error_and_not_followed(
    cited_remote, alice, remote_knowledge
):
    remote_knowledge.redirect(remote_knowledge.url_for("/elsewhere"))
    assert_problem(preview(cited_remote, alice), 502, "KNOWLEDGE_SOURCE_ERROR")
    assert remote_knowledge.requests_to("/elsewhere") == []


def test_an_unreachable_source_is_knowledge_source_unavailable(
    cited_remote, alice, remote_knowledge, caplog
):
    remote_knowledge.stop()  # the port is closed now: connection refused
    with caplog.at_level(logging.WARNING, logger="citations.preview"):
        assert_problem(preview(cited_remote, alice), 503, "KNOWLEDGE_SOURCE_UNAVAILABLE")
    # The cause goes to the log only, with the reference it was for.
    [line] = [r.getMessage() for r in caplog.records if r.name == "citations.preview"]
    assert line.startswith(f"citation preview of {cited_remote.reference.pk}: ")
    assert not line.endswith(": None")  # the cause itself, not a placeholder


@pytest.mark.parametrize(
    "missing",
    [{"query": None, "top_k": None}, {"query": None}, {"top_k": None}, {"remote_item_id": ""}],
    ids=["query-and-top-k", "query", "top-k", "item-id"],
)
def test_a_remote_reference_without_its_retrieval_parameters_is_not_available(
    cited_remote, alice, remote_knowledge, missing
):
    """Each of the query, the topK and the item ID is needed to ask again: without any
    one of them the source is not called."""
    from citations.models import CitationReference

    CitationReference.objects.filter(pk=cited_remote.reference.pk).update(**missing)
    assert_problem(preview(cited_remote, alice), 404, "CITATION_NOT_AVAILABLE")
    assert remote_knowledge.requests == []


def test_the_remote_is_not_called_when_an_earlier_check_refuses(
    cited_remote, alice, app, remote_version, remote_knowledge
):
    from django.utils import timezone

    from knowledge.models import Lease

    Lease.objects.filter(app=app, version=remote_version).update(revoked_at=timezone.now())
    assert_problem(preview(cited_remote, alice), 503, "CAPABILITY_UNAVAILABLE")
    assert remote_knowledge.requests == []


def test_the_remote_error_codes_are_the_documented_ones():
    from knowledge.remote import RemoteBadResponse, RemoteTimeout, RemoteUnavailable

    assert (RemoteTimeout.code_for_class, RemoteTimeout.code_for_class.status) == (
        ErrorCode.CITATION_PREVIEW_TIMED_OUT,
        408,
    )
    assert RemoteBadResponse.code_for_class.status == 502
    assert RemoteUnavailable.code_for_class.status == 503
