"""REMOTE knowledge against a real local HTTP server: signed requests with a trusted
context, one total deadline, no redirects, an SSRF allow-list, strict answers."""

import json
import socket
import time

import pytest

from foundation.errors import ErrorCode
from knowledge.models import Knowledge
from knowledge.remote import (
    RefusedItem,
    RemoteBadResponse,
    RemoteKnowledgeError,
    RemoteTimeout,
    RemoteUnavailable,
    call_remote,
)
from knowledge.retrieval import search_remote
from knowledge.text import snippet_digest
from tests.factories import make_knowledge, publish
from tests.remote_server import DEFAULT_SECRET, make_remote_version, remote_item

pytestmark = pytest.mark.django_db

REPORT = "北辰医药三季度营收增长12%。"


@pytest.fixture
def crm(tenant, remote_knowledge):
    remote_knowledge.set_items(
        [
            remote_item(
                "crm-1",
                REPORT,
                version="7",
                title="客户拜访纪要",
                page=2,
                locator={"start": 10, "end": 24},
                uri=remote_knowledge.url_for("/documents/crm-1"),
            ),
            remote_item("crm-2", "第二条：回款正常。"),
        ]
    )
    return make_remote_version(tenant, remote_knowledge, key="crm")


def call(version, context, **kwargs):
    kwargs.setdefault("query", "营收")
    kwargs.setdefault("top_k", 5)
    return call_remote(version, context=context, **kwargs)


# --- what is sent --------------------------------------------------------------


def test_the_body_carries_the_query_the_knowledge_and_the_trusted_context(
    crm, context, remote_knowledge
):
    call(crm, context, query="北辰医药营收", top_k=3)

    (request,) = remote_knowledge.requests
    assert request.method == "POST"
    assert request.path == "/retrieve"
    assert request.headers["content-type"] == "application/json; charset=utf-8"
    assert request.json == {
        "query": "北辰医药营收",
        "topK": 3,
        "knowledgeId": "crm",
        "knowledgeVersion": "1",
        "context": {
            "tenant": "acme",
            "app": "business",
            "user": "alice",
            "businessSessionId": "sess-1",
        },
    }


def test_the_request_is_signed_over_timestamp_and_body_with_the_versions_secret(
    crm, context, remote_knowledge
):
    call(crm, context)

    (request,) = remote_knowledge.requests
    assert request.signature_is_valid(DEFAULT_SECRET)
    assert not request.signature_is_valid("another-secret")
    assert abs(int(request.headers["x-sparktide-timestamp"]) - time.time()) < 60
    assert DEFAULT_SECRET not in request.body.decode() + json.dumps(request.headers)


def test_a_source_that_checks_signatures_accepts_ours(crm, context, remote_knowledge):
    remote_knowledge.require_signature(DEFAULT_SECRET)

    assert [item.id for item in call(crm, context)] == ["crm-1", "crm-2"]


def test_a_source_that_expects_another_secret_refuses_and_that_is_a_source_error(
    crm, context, remote_knowledge
):
    remote_knowledge.require_signature("rotated-secret")

    with pytest.raises(RemoteBadResponse, match="HTTP 401"):
        call(crm, context)


# --- what comes back -------------------------------------------------------------


def test_items_come_back_in_the_sources_order_with_their_fields(crm, context, remote_knowledge):
    first, second = call(crm, context)

    assert (first.id, first.version, first.title, first.content) == (
        "crm-1",
        "7",
        "客户拜访纪要",
        REPORT,
    )
    assert (first.page, first.locator) == (2, {"start": 10, "end": 24})
    assert first.uri == remote_knowledge.url_for("/documents/crm-1")
    assert (second.id, second.version, second.page, second.locator, second.uri) == (
        "crm-2",
        "",
        None,
        None,
        None,
    )


def test_retrieved_remote_items_carry_a_public_source_ref(crm, context, remote_knowledge):
    first, second = search_remote(crm, query="营收", top_k=5, context=context)

    assert first.version == crm and first.document is None and first.chunk is None
    assert first.content == REPORT and first.title == "客户拜访纪要"
    assert first.digest == snippet_digest(REPORT)
    assert (first.remote_item_id, first.remote_item_version) == ("crm-1", "7")
    assert first.source_ref == {
        "type": "remote",
        "id": "crm-1",
        "version": "7",
        "page": 2,
        "locator": {"start": 10, "end": 24},
        "uri": remote_knowledge.url_for("/documents/crm-1"),
    }
    assert first.score == 1.0 > second.score


def test_an_item_without_a_version_uses_its_digest_as_source_version(crm, context):
    second = search_remote(crm, query="营收", top_k=5, context=context)[1]

    assert second.remote_item_version == ""
    assert second.source_ref == {"type": "remote", "id": "crm-2", "version": second.digest}


def test_the_uri_of_an_item_is_never_visited(crm, context, remote_knowledge):
    search_remote(crm, query="营收", top_k=5, context=context)

    assert remote_knowledge.requests_to("/documents/crm-1") == []
    assert len(remote_knowledge.requests) == 1


def test_a_source_answering_more_than_top_k_items_is_cut_to_top_k(crm, context):
    assert [item.id for item in call(crm, context, top_k=1)] == ["crm-1"]


def test_content_of_exactly_16384_utf16_units_is_accepted(crm, context, remote_knowledge):
    remote_knowledge.set_items([remote_item("long", "营" * 16384)])

    assert len(call(crm, context)[0].content) == 16384


def test_a_source_that_changed_an_item_returns_the_new_content(crm, context, remote_knowledge):
    remote_knowledge.change_item("crm-1", content="已更正：营收增长10%。", version="8")
    remote_knowledge.drop_item("crm-2")

    (item,) = call(crm, context)
    assert (item.id, item.version, item.content) == ("crm-1", "8", "已更正：营收增长10%。")


def test_a_blank_query_does_not_call_the_source(crm, context, remote_knowledge):
    assert search_remote(crm, query="  ", top_k=5, context=context) == []
    assert remote_knowledge.requests == []


# --- the deadline ------------------------------------------------------------------


def assert_times_out_quickly(version, context, **kwargs):
    started = time.monotonic()
    with pytest.raises(RemoteTimeout, match="did not answer within") as caught:
        call(version, context, **kwargs)
    assert time.monotonic() - started < 1.5
    assert (caught.value.code, caught.value.status) == (ErrorCode.CITATION_PREVIEW_TIMED_OUT, 408)


def test_a_slow_source_times_out_at_the_settings_cap(crm, context, remote_knowledge, settings):
    settings.SPARKTIDE_REMOTE_TIMEOUT_CAP = 0.2
    remote_knowledge.sleep(5)

    assert_times_out_quickly(crm, context)


def test_a_slow_source_times_out_at_the_callers_timeout(crm, context, remote_knowledge):
    remote_knowledge.sleep(5)

    assert_times_out_quickly(crm, context, timeout=0.2)


def test_a_slow_source_times_out_at_the_versions_timeout(tenant, context, remote_knowledge):
    version = make_remote_version(tenant, remote_knowledge, timeout_seconds=0.2)
    remote_knowledge.sleep(5)

    assert_times_out_quickly(version, context)


def test_a_source_that_trickles_its_answer_still_times_out(crm, context, remote_knowledge):
    """Every byte arrives well within a per-read timeout; the deadline is for the whole call."""
    remote_knowledge.trickle(interval=0.02, total=10)

    assert_times_out_quickly(crm, context, timeout=0.3)


def test_a_slow_source_is_asked_only_once(crm, context, remote_knowledge):
    remote_knowledge.sleep(5)

    # (a deadline of a second, far under the server's five: on a loaded machine 0.2 s could
    # pass before the request was even written, and then nothing would be proven)
    with pytest.raises(RemoteTimeout):
        call(crm, context, timeout=1.0)
    # On a loaded machine the deadline can pass before the server's thread has recorded the
    # request it is reading: wait for the first, then long enough for a retry to show.
    deadline = time.monotonic() + 5
    while not remote_knowledge.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.5)
    assert len(remote_knowledge.requests) == 1


# --- redirects, allow-list, reachability --------------------------------------------


def test_a_redirect_is_refused_and_never_followed(crm, context, remote_knowledge):
    remote_knowledge.redirect(remote_knowledge.url_for("/elsewhere"))

    with pytest.raises(RemoteBadResponse, match="redirect") as caught:
        call(crm, context)
    assert (caught.value.code, caught.value.status) == (ErrorCode.KNOWLEDGE_SOURCE_ERROR, 502)
    assert remote_knowledge.requests_to("/elsewhere") == []
    assert len(remote_knowledge.requests) == 1


def test_a_host_outside_the_allow_list_is_refused_without_connecting(
    crm, context, remote_knowledge, settings
):
    settings.SPARKTIDE_REMOTE_ALLOWED_HOSTS = ["knowledge.example.com"]

    with pytest.raises(RemoteUnavailable, match="not on SPARKTIDE_REMOTE_ALLOWED_HOSTS") as caught:
        call(crm, context)
    assert (caught.value.code, caught.value.status) == (ErrorCode.KNOWLEDGE_SOURCE_UNAVAILABLE, 503)
    assert remote_knowledge.requests == []


def test_an_allow_list_entry_with_a_port_allows_only_that_port(
    crm, context, remote_knowledge, settings
):
    settings.SPARKTIDE_REMOTE_ALLOWED_HOSTS = [f"127.0.0.1:{remote_knowledge.port + 1}"]
    with pytest.raises(RemoteUnavailable):
        call(crm, context)
    assert remote_knowledge.requests == []

    settings.SPARKTIDE_REMOTE_ALLOWED_HOSTS = [remote_knowledge.host]
    assert len(call(crm, context)) == 2


def test_the_allow_list_is_read_at_call_time(crm, context, remote_knowledge, settings):
    settings.SPARKTIDE_REMOTE_ALLOWED_HOSTS = []

    with pytest.raises(RemoteUnavailable):
        call(crm, context)
    assert remote_knowledge.requests == []


@pytest.mark.parametrize("endpoint", ["ftp://127.0.0.1/retrieve", "file:///etc/passwd"])
def test_only_http_and_https_endpoints_are_called(tenant, context, endpoint):
    version = publish(
        make_knowledge(tenant, type=Knowledge.Type.REMOTE, endpoint=endpoint, secret="s")
    )

    with pytest.raises(RemoteUnavailable, match="scheme"):
        call(version, context)


def test_an_unreachable_source_is_unavailable(tenant, context):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    version = publish(
        make_knowledge(
            tenant,
            type=Knowledge.Type.REMOTE,
            endpoint=f"http://127.0.0.1:{port}/retrieve",
            secret="s",
        )
    )

    with pytest.raises(RemoteUnavailable, match="cannot be reached") as caught:
        call(version, context)
    assert caught.value.code == ErrorCode.KNOWLEDGE_SOURCE_UNAVAILABLE


# --- bad answers ---------------------------------------------------------------------


def test_a_server_error_is_a_bad_response(crm, context, remote_knowledge):
    remote_knowledge.fail(500)

    with pytest.raises(RemoteBadResponse, match="HTTP 500") as caught:
        call(crm, context)
    assert (caught.value.code, caught.value.status) == (ErrorCode.KNOWLEDGE_SOURCE_ERROR, 502)
    assert len(remote_knowledge.requests) == 1


def item(**fields):
    base = {"id": "x-1", "title": "标题", "content": "营收增长。"}
    base.update(fields)
    return {key: value for key, value in base.items() if value is not ...}


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe\x00", "not JSON"),
        ([], "not a JSON object"),
        ({"results": []}, '"items" is missing'),
        ({"items": {"id": "x"}}, '"items" is missing or not a list'),
        ({"items": ["x"]}, r"items\[0\] is not an object"),
        ({"items": [item(id=...)]}, r"items\[0\]\.id is missing"),
        ({"items": [item(id=7)]}, r"items\[0\]\.id is not a string"),
        ({"items": [item(id=" ")]}, r"items\[0\]\.id is empty"),
        ({"items": [item(title=...)]}, r"items\[0\]\.title is missing"),
        ({"items": [item(content=...)]}, r"items\[0\]\.content is missing"),
        ({"items": [item(content="")]}, r"items\[0\]\.content is empty"),
        ({"items": [item(content=" \n ")]}, r"items\[0\]\.content is empty"),
        ({"items": [item(content=["营收"])]}, r"items\[0\]\.content is not a string"),
        ({"items": [item(content="营" * 16385)]}, "longer than 16384 UTF-16"),
        ({"items": [item(content="𠀀" * 8193)]}, "longer than 16384 UTF-16"),
        ({"items": [item(version=3)]}, r"items\[0\]\.version is not a string"),
        ({"items": [item(page=0)]}, r"items\[0\]\.page is not an integer ≥ 1"),
        ({"items": [item(page="2")]}, r"items\[0\]\.page"),
        ({"items": [item(page=True)]}, r"items\[0\]\.page"),
        ({"items": [item(locator={"start": 5})]}, r"items\[0\]\.locator"),
        ({"items": [item(locator={"start": 9, "end": 3})]}, r"items\[0\]\.locator"),
        ({"items": [item(locator=[1, 2])]}, r"items\[0\]\.locator is not an object"),
        ({"items": [item(uri=42)]}, r"items\[0\]\.uri is not a string"),
        ({"items": [item(), item()]}, r"items\[1\]\.id 'x-1' repeats items\[0\]"),
    ],
)
def test_a_malformed_answer_is_a_bad_response_naming_the_problem(
    crm, context, remote_knowledge, body, problem
):
    if isinstance(body, bytes):
        remote_knowledge.respond_raw(body)
    else:
        remote_knowledge.respond_json(body)

    with pytest.raises(RemoteBadResponse, match=problem) as caught:
        call(crm, context)
    assert caught.value.status == 502


def test_a_lone_surrogate_in_content_leaves_that_item_out_not_the_answer(
    crm, context, remote_knowledge
):
    remote_knowledge.respond_raw(
        b'{"items": [{"id": "a", "title": "t", "content": "\\ud800"},'
        b' {"id": "b", "title": "t", "content": "ok"}]}'
    )

    items = call(crm, context)
    assert [i.id for i in items] == ["b"]
    assert items.refused == (RefusedItem(index=0, field="content"),)


@pytest.mark.parametrize("field", ["id", "title", "version", "uri", "content"])
def test_a_nul_in_any_stored_field_leaves_that_item_out(crm, context, remote_knowledge, field):
    entry = {"id": "a", "title": "t", "version": "1", "uri": "http://x/a", "content": "ok"}
    entry[field] += "\x00"
    remote_knowledge.respond_json({"items": [entry]})

    items = call(crm, context)
    assert list(items) == []
    assert items.refused == (RefusedItem(index=0, field=field),)


def test_optional_fields_may_be_null(crm, context, remote_knowledge):
    remote_knowledge.respond_json(
        {"items": [item(version=None, page=None, locator=None, uri=None)]}
    )

    (only,) = call(crm, context)
    assert (only.version, only.page, only.locator, only.uri) == ("", None, None, None)


def test_an_empty_item_list_is_a_valid_answer(crm, context, remote_knowledge):
    remote_knowledge.respond_json({"items": []})

    assert call(crm, context) == []


def test_every_remote_error_is_a_sparktide_error_with_a_problem_body():
    for error in (RemoteTimeout("t"), RemoteUnavailable("u"), RemoteBadResponse("b")):
        assert isinstance(error, RemoteKnowledgeError)
        assert error.problem()["code"] == error.code
        assert error.problem()["status"] == error.status


# --- callers in async code ----------------------------------------------------------


async def test_call_remote_works_inside_a_running_event_loop(crm, context):
    assert [item.id for item in call(crm, context)] == ["crm-1", "crm-2"]
