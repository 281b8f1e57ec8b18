"""sparktide-client against a real daphne on PostgreSQL: runs, events with resume, the live
stream, previews (success and every failure code the test can cause), a URI refused before any
request, and no retry — a 503, a timeout and an async cancellation each cost one request."""

import asyncio
import time

import pytest
from django.db import connection
from django.db.models import F
from django.utils import timezone
from guardian.shortcuts import remove_perm
from sparktide_client import (
    AsyncClient,
    AuthenticationError,
    Client,
    ConflictError,
    GoneError,
    InvalidCitationIdError,
    NotFoundError,
    PermissionDeniedError,
    RequestTimeoutError,
    ServerError,
    SparkTideError,
    UnprocessableError,
)

from knowledge.models import Chunk, KnowledgeVersion, Lease
from publication.models import AnswerBlock
from runs.models import DeliveryLog, Run
from tenancy.models import App
from tests.clients.conftest import (
    start_live_server,
    verified_citations,
    wait_for_running,
    wait_for_terminal,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FORGED = "cite_" + "z" * 24  # well-formed, never issued


def client_for(server, user, **kwargs) -> Client:
    return Client(server.url, "business", user.raw_token, **kwargs)


def finished_run(client: Client, agent: str = "researcher", **kwargs) -> dict:
    run = client.create_run(agent, "北辰医药营收如何？", **kwargs)
    wait_for_terminal(run["id"])
    return client.get_run(run["id"])


# --- runs ------------------------------------------------------------------------------


def test_runs_are_created_read_listed_answered_and_cancelled(sparktide_server, agents, alice, bob):
    with client_for(sparktide_server, alice) as client:
        created = client.create_run("researcher", "北辰医药营收如何？", session_id="s-7")
        assert created["id"].startswith("run_")
        assert (created["status"], created["agent"], created["agentVersion"]) == (
            "QUEUED",
            "researcher",
            "1",
        )
        wait_for_terminal(created["id"])
        run = client.get_run(created["id"])
        assert run["status"] == "COMPLETED" and run["sessionId"] == "s-7"
        assert "completedAt" in run

        sleepy = client.create_run("sleepy", "慢慢想")
        wait_for_running(sleepy["id"])
        assert client.cancel(sleepy["id"]) is None  # 202, no body
        assert wait_for_terminal(sleepy["id"]).status == "CANCELLED"
        assert not AnswerBlock.objects.filter(run_id=sleepy["id"]).exists()
        with pytest.raises(ConflictError) as finished:
            client.cancel(sleepy["id"])
        assert (finished.value.code, finished.value.status) == ("RUN_ALREADY_FINISHED", 409)
        assert finished.value.problem["code"] == "RUN_ALREADY_FINISHED"

        page = client.list_runs(limit=1)
        assert [r["id"] for r in page["runs"]] == [sleepy["id"]]
        assert page["nextCursor"]
        assert [r["id"] for r in client.iter_runs(limit=1)] == [sleepy["id"], created["id"]]
        assert [r["id"] for r in client.list_runs(session_id="s-7")["runs"]] == [created["id"]]
        assert [r["id"] for r in client.list_runs(status="CANCELLED")["runs"]] == [sleepy["id"]]

        blocks = client.answer(created["id"])["blocks"]
        assert [b["revision"] for b in blocks] == [1, 1]
        assert all(isinstance(b["content"]["text"], str) for b in blocks)

        with pytest.raises(UnprocessableError) as unknown:
            client.create_run("nobody", "x")
        assert unknown.value.code == "AGENT_NOT_AVAILABLE"

    with client_for(sparktide_server, bob) as other:
        assert other.list_runs()["runs"] == []
        with pytest.raises(NotFoundError) as hidden:
            other.get_run(created["id"])
        assert (hidden.value.code, hidden.value.status) == ("RESOURCE_NOT_FOUND", 404)


# --- events ----------------------------------------------------------------------------


def test_events_page_over_rest_and_resume_from_the_cursor(sparktide_server, agents, alice):
    with client_for(sparktide_server, alice) as client:
        run = finished_run(client)
        everything = [e["seq"] for e in client.events(run["id"], limit=500)]
        assert everything == list(range(1, len(everything) + 1))

        pager = client.events(run["id"], limit=2)
        first = [next(pager)["seq"] for _ in range(3)]  # two pages read, one event left over
        assert first == [1, 2, 3] and pager.after == 3 and not pager.terminal
        resumed = client.events(run["id"], after=pager.after, limit=2)
        rest = list(resumed)
        assert [e["seq"] for e in rest] == everything[3:]
        assert rest[-1]["type"] == "run.completed" and resumed.terminal
        assert all(set(e) == {"seq", "type", "at", "data"} for e in rest)


def test_events_follow_a_running_run_until_its_end(sparktide_server, agents, alice):
    with client_for(sparktide_server, alice) as client:
        run = client.create_run("slow", "营收？")
        events = list(client.events(run["id"], poll_interval=0.2))
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert events[-1]["type"] == "run.completed"
        assert not list(client.events(run["id"], after=events[-1]["seq"], follow=False))


def test_the_stream_delivers_each_event_once_in_order_and_resumes_after_a_cut(
    sparktide_server, agents, alice
):
    with client_for(sparktide_server, alice) as client:
        run = client.create_run("slow", "营收？")
        stream = client.stream(run["id"])
        head = [next(stream) for _ in range(2)]
        stream.close()  # the consumer goes away: the socket closes, the run goes on
        tail = list(client.stream(run["id"], after=head[-1]["seq"]))
        seqs = [e["seq"] for e in head + tail]
        assert seqs == list(range(1, len(seqs) + 1))
        assert tail[-1]["type"] == "run.completed"
        assert wait_for_terminal(run["id"]).last_seq == seqs[-1]
        # The same events, whichever way they are read.
        assert head + tail == list(client.events(run["id"]))


def test_the_stream_reconnects_from_its_cursor_when_the_server_drops_a_slow_client(
    transactional_db, agents, alice
):
    """A real 4408: the server allows two unacknowledged events and drops a client that
    stays behind for 0.3 s while the run goes on. The stream reconnects at once with a fresh
    ticket from the last seq it delivered; the consumer still sees every event once, in order."""
    server = start_live_server(SPARKTIDE_WS_ACK_WINDOW="2", SPARKTIDE_WS_SLOW_CLIENT_SECONDS="0.3")
    try:
        with client_for(server, alice) as client:
            run = client.create_run("slow", "营收？")
            seqs = []
            for event in client.stream(run["id"]):
                seqs.append(event["seq"])
                if len(seqs) == 1:
                    time.sleep(1.5)  # acks stop: the server pauses, then closes 4408
            assert seqs == list(range(1, run_last_seq(run["id"]) + 1))
            connections = DeliveryLog.objects.filter(run_id=run["id"]).count()
            assert connections >= 2, "the stream never had to reconnect"
            assert len(server.requests_to(f"/runs/{run['id']}/events/ticket")) == connections
    finally:
        server.process.stop(timeout=3)


def run_last_seq(run_id: str) -> int:
    return Run.objects.get(pk=run_id).last_seq


def test_a_stream_of_a_run_that_is_not_yours_raises_not_found(sparktide_server, agents, alice, bob):
    with client_for(sparktide_server, alice) as client:
        run = finished_run(client)
    with client_for(sparktide_server, bob) as other, pytest.raises(NotFoundError) as refused:
        next(other.stream(run["id"]))
    assert refused.value.code == "RESOURCE_NOT_FOUND"


# --- previews --------------------------------------------------------------------------


def test_a_preview_is_plain_data_whose_content_is_text(sparktide_server, agents, alice):
    with client_for(sparktide_server, alice) as client:
        run = finished_run(client)
        citation_id = verified_citations(run["id"])[0]
        preview = client.preview_citation(run["id"], citation_id)
    assert preview["id"] == citation_id
    assert isinstance(preview["content"], str) and "营收增长" in preview["content"]
    assert preview["scope"] == "RETRIEVED_EXCERPT"
    assert preview["knowledgeVersion"] == "2026-10" and preview["documentId"] == "report-a"
    assert isinstance(preview["sourceRef"], dict)


def test_each_preview_failure_arrives_as_a_typed_error_with_code_status_and_problem(
    sparktide_server, agents, alice, bob, app, knowledge
):
    """The checks are broken from the last to the first (docs/preview.md): each newly broken
    earlier check takes over the answer."""
    with client_for(sparktide_server, alice) as client:
        run = finished_run(client)
        run_id, citation_id = run["id"], verified_citations(run["id"])[0]

        def refused(error_type, code, status, *, as_client=client, cite=citation_id):
            with pytest.raises(error_type) as caught:
                as_client.preview_citation(run_id, cite)
            error = caught.value
            assert (error.code, error.status) == (code, status)
            assert error.problem["code"] == code and error.problem["status"] == status
            assert error.problem["type"].startswith("urn:sparktide:problem:")
            return error

        assert client.preview_citation(run_id, citation_id)["id"] == citation_id
        with connection.cursor() as cursor:  # behind the platform's back
            cursor.execute(
                f"UPDATE {Chunk._meta.db_table} SET text = %s WHERE id = %s",
                ["北辰医药营收下降", run_chunk(citation_id)],
            )
        error = refused(ConflictError, "CITATION_SOURCE_CHANGED", 409)
        assert "下降" not in str(error.problem)
        Lease.objects.filter(app=app, version=knowledge).update(revoked_at=timezone.now())
        refused(ServerError, "CAPABILITY_UNAVAILABLE", 503)
        KnowledgeVersion.objects.filter(pk=knowledge.pk).update(
            status=KnowledgeVersion.Status.REVOKED
        )
        refused(ConflictError, "CAPABILITY_UNAVAILABLE", 409)
        refused(NotFoundError, "CITATION_NOT_AVAILABLE", 404, cite=FORGED)
        App.objects.filter(pk=app.pk).update(knowledge_access_epoch=F("knowledge_access_epoch") + 1)
        refused(ConflictError, "KNOWLEDGE_ACCESS_CHANGED", 409)
        App.objects.filter(pk=app.pk).update(security_policy_epoch=F("security_policy_epoch") + 1)
        refused(ConflictError, "SECURITY_POLICY_CHANGED", 409)
        remove_perm("tenancy.view_run_history", alice, App.objects.get(pk=app.pk))
        refused(PermissionDeniedError, "BUSINESS_PERMISSION_DENIED", 403)
        Run.objects.filter(pk=run_id).update(archived_at=timezone.now())
        refused(GoneError, "EVENT_CURSOR_EXPIRED", 410)
        App.objects.filter(pk=app.pk).update(status=App.Status.SUSPENDED)
        refused(PermissionDeniedError, "APP_NOT_ACTIVE", 403)
        with client_for(sparktide_server, bob) as other:
            refused(NotFoundError, "RESOURCE_NOT_FOUND", 404, as_client=other)
        with Client(sparktide_server.url, "business", "st_not_a_token") as stranger:
            refused(AuthenticationError, "AUTHENTICATION_REQUIRED", 401, as_client=stranger)
    # Every one of them was one request, never retried.
    assert len(sparktide_server.requests_to(f"/runs/{run_id}/citations/")) == 12


def test_remote_source_and_document_acl_failures_arrive_typed_too(
    transactional_db,
    app,
    alice,
    knowledge,
    remote_knowledge,  # noqa: F811 - the fixture
):
    from tests import factories
    from tests.remote_server import make_remote_version, remote_item

    remote_knowledge.set_items([remote_item("crm-1", "客户拜访纪要：营收增长12%。", version="7")])
    crm = make_remote_version(app.tenant, remote_knowledge, key="crm")
    factories.lease(app, crm)
    cites = {"answerPart": "依据 [[cite:{{c1}}]]"}
    memo_run = factories.scripted_run(
        app, alice, [{"search": "内部投研纪要", "topK": 1}, cites], knowledge=[knowledge], key="m"
    )
    remote_run = factories.scripted_run(
        app, alice, [{"search": "营收", "topK": 1}, cites], knowledge=[crm], key="r"
    )
    remote_knowledge.requests.clear()  # the run's own retrieval
    server = start_live_server(SPARKTIDE_REMOTE_TIMEOUT_CAP="0.5")
    try:
        with client_for(server, alice) as client:
            memo_id = verified_citations(memo_run.pk)[0]
            assert "仅限分析师阅读" in client.preview_citation(memo_run.pk, memo_id)["content"]
            remove_perm("knowledge.read_document", alice, knowledge.memo)
            with pytest.raises(PermissionDeniedError) as denied:
                client.preview_citation(memo_run.pk, memo_id)
            assert (denied.value.code, denied.value.status) == ("KNOWLEDGE_ACCESS_DENIED", 403)

            remote_id = verified_citations(remote_run.pk)[0]
            assert client.preview_citation(remote_run.pk, remote_id)["content"].startswith("客户")
            for behave, code, status in (
                (lambda: remote_knowledge.sleep(5), "CITATION_PREVIEW_TIMED_OUT", 408),
                (lambda: remote_knowledge.fail(500), "KNOWLEDGE_SOURCE_ERROR", 502),
                (remote_knowledge.stop, "KNOWLEDGE_SOURCE_UNAVAILABLE", 503),
            ):
                remote_knowledge.reset()
                behave()
                with pytest.raises(ServerError) as failed:
                    client.preview_citation(remote_run.pk, remote_id)
                assert (failed.value.code, failed.value.status) == (code, status)
                assert failed.value.problem["code"] == code
        # one request per preview, at the platform and at the source: nothing retried
        assert len(server.requests_to("/citations/")) == 6
        assert len(remote_knowledge.requests) == 3  # ok, timed out, 500; then unreachable
    finally:
        server.process.stop(timeout=3)


def run_chunk(citation_id: str) -> int:
    from citations.models import CitationReference

    return CitationReference.objects.get(pk=citation_id).chunk_id


REFUSED_IDS = [
    "https://example.com/report-a",
    "https%3A%2F%2Fexample.com%2Freport-a",
    "[来源](https://example.com)",
    "../../admin",
    "cite_" + "a" * 23,
    "CITE_" + "a" * 24,
    "cite_" + "a" * 24 + "\n",
]


def test_a_uri_or_malformed_id_is_refused_before_any_request(sparktide_server, agents, alice):
    with client_for(sparktide_server, alice) as client:
        run = finished_run(client)
        for citation_id in REFUSED_IDS:
            before = len(sparktide_server.requests())
            with pytest.raises(InvalidCitationIdError) as refused:
                client.preview_citation(run["id"], citation_id)
            # One request afterwards, so the log is known to be written up to here.
            client.get_run(run["id"])
            error = refused.value
            assert isinstance(error, ValueError) and isinstance(error, SparkTideError)
            assert (error.code, error.status, error.problem) == ("CITATION_NOT_AVAILABLE", 0, None)
            after = sparktide_server.requests()[before:]
            assert len(after) == 1 and f"GET /v1/apps/business/runs/{run['id']}" in after[0]
    assert not sparktide_server.requests_to("/citations/")


# --- no retry, timeouts, cancellation (a real local server that counts) -----------------


def test_a_503_is_raised_once_and_never_retried(counting_server):
    with Client(counting_server.url, "business", "st_token") as client:
        with pytest.raises(ServerError) as failed:
            client.preview_citation("run_x", FORGED)
        assert (failed.value.code, failed.value.status) == ("KNOWLEDGE_SOURCE_UNAVAILABLE", 503)
        assert failed.value.problem == counting_server.body
        with pytest.raises(ServerError):
            client.get_run("run_x")
    time.sleep(0.3)  # a retry, if there were one, would have arrived by now
    assert counting_server.requests == [
        ("GET", f"/v1/apps/business/runs/run_x/citations/{FORGED}/preview"),
        ("GET", "/v1/apps/business/runs/run_x"),
    ]


def test_an_error_page_that_is_not_a_problem_is_an_http_error(counting_server):
    counting_server.status, counting_server.body = 502, ["not", "a", "problem"]
    with (
        Client(counting_server.url, "business", "st_token") as client,
        pytest.raises(ServerError) as failed,
    ):
        client.get_run("run_x")
    assert (failed.value.code, failed.value.status, failed.value.problem) == (
        "HTTP_ERROR",
        502,
        None,
    )


def test_a_call_past_its_timeout_raises_and_is_not_retried(counting_server):
    counting_server.delay = 1.0
    with Client(counting_server.url, "business", "st_token", timeout=5) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError) as late:
            client.preview_citation("run_x", FORGED, timeout=0.2)
        assert time.monotonic() - started < 0.9
    assert late.value.code == "TIMEOUT" and isinstance(late.value, TimeoutError)
    time.sleep(1.2)
    assert counting_server.count() == 1


async def test_an_async_preview_is_cancelled_with_its_task_and_not_retried(counting_server):
    counting_server.delay = 2.0
    async with AsyncClient(counting_server.url, "business", "st_token") as client:
        task = asyncio.create_task(client.preview_citation("run_x", FORGED))
        while counting_server.count() == 0:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(RequestTimeoutError):
            await client.get_run("run_x", timeout=0.1)
        with pytest.raises(InvalidCitationIdError):
            await client.preview_citation("run_x", "https://example.com/doc")
    await asyncio.sleep(0.5)
    assert counting_server.count() == 2


async def test_an_async_timeout_scope_cancels_the_call(counting_server):
    counting_server.delay = 2.0
    async with AsyncClient(counting_server.url, "business", "st_token") as client:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await client.get_run("run_x")
        assert time.monotonic() - started < 1.5
    assert counting_server.count() == 1


# --- the async client against the real server ------------------------------------------


async def test_the_async_client_runs_streams_and_previews(sparktide_server, agents, alice):
    async with AsyncClient(sparktide_server.url, "business", alice.raw_token) as client:
        run = await client.create_run("slow", "营收？")
        streamed = [event async for event in client.stream(run["id"])]
        seqs = [e["seq"] for e in streamed]
        assert seqs == list(range(1, len(seqs) + 1))
        assert streamed[-1]["type"] == "run.completed"
        paged = [event async for event in client.events(run["id"], limit=3)]
        assert paged == streamed
        assert [r["id"] async for r in client.iter_runs()] == [run["id"]]
        check = next(e for e in streamed if e["type"] == "citation.verified")
        citation_id = next(
            r["id"] for r in check["data"]["references"] if r["status"] == "VERIFIED"
        )
        preview = await client.preview_citation(run["id"], citation_id)
        assert isinstance(preview["content"], str)
        with pytest.raises(NotFoundError) as forged:
            await client.preview_citation(run["id"], FORGED)
        assert forged.value.code == "CITATION_NOT_AVAILABLE"


@pytest.mark.parametrize("code", [4503, 4500, 1011])
def test_a_server_fault_close_is_resumed_from_the_cursor_after_a_backoff(code):
    """4503 DATABASE_UNAVAILABLE, 4500 INTERNAL_ERROR (and 1011, which older servers sent):
    the stream reconnects after a backoff from the last seq it delivered, instead of raising."""
    from sparktide_client import _core

    policy = _core.StreamPolicy(after=0, max_reconnects=3)
    assert policy.on_message('{"kind":"event","seq":1,"type":"agent.started","data":{}}')
    policy.on_message('{"kind":"error","code":"DATABASE_UNAVAILABLE","detail":"later"}')
    delay = policy.after_close(code)
    assert delay is not None and 0 < delay <= 5.0
    assert policy.last_seq == 1  # the next socket asks for after=1
    assert policy.on_message('{"kind":"event","seq":1,"type":"agent.started","data":{}}') is None


def test_other_4xxx_closes_still_raise_with_the_frame_code():
    from sparktide_client import StreamError, _core

    policy = _core.StreamPolicy(after=0, max_reconnects=3)
    policy.on_message('{"kind":"error","code":"INVALID_REQUEST","detail":"bad after"}')
    with pytest.raises(StreamError) as raised:
        policy.after_close(4400)
    assert raised.value.code == "INVALID_REQUEST"


# --- the live text, end to end ---------------------------------------------------------


def test_stream_text_yields_the_growing_text_then_its_close_against_a_live_daphne(
    app, knowledge, alice
):
    """A real model server streams slowly (after hidden reasoning); ``stream_text`` yields the
    turn's whole text so far each time it grows — before the answer is published — then the
    close with Publication's outcome, and never the reasoning."""
    from tests import factories
    from tests.providers.fake_openai import FakeOpenAI, chunk, finish_chunk, stream, text_chunk

    words = ["北辰医药", "营收", "增长", " 12%", "。"]
    reply = stream(
        [
            chunk({"reasoning_content": "SECRET-思考"}),
            *map(text_chunk, words),
            finish_chunk("stop"),
        ],
        delay_between=0.15,
    )
    with FakeOpenAI([reply]) as model:
        factories.make_agent(
            app.tenant,
            "llm",
            model=model.model(),
            knowledge=[knowledge],
            pin_to=[app],
        )
        # The key for daphne's in-process worker.
        server = start_live_server(SPARKTIDE_TEST_OPENAI_KEY="sk-test")
        try:
            with client_for(server, alice) as client:
                run = client.create_run("llm", "营收如何？")
                items = list(client.stream_text(run["id"]))
        finally:
            server.process.stop(timeout=3)
    texts = [item["text"] for item in items if "text" in item]
    assert texts and texts[-1] == "".join(words)
    assert all(later.startswith(earlier) for earlier, later in zip(texts, texts[1:], strict=False))
    assert len(texts) >= 2  # it grew while the model spoke, not once at the end
    kinds = ["text" if "text" in i else "closed" if i.get("closed") else i["type"] for i in items]
    assert kinds.index("text") < kinds.index("answer.published")
    [closed] = [i for i in items if i.get("closed")]
    assert closed["reason"] == "committed"
    assert kinds.index("closed") > kinds.index("answer.published")
    assert kinds[-1] == "run.completed"
    assert "SECRET" not in repr(items)
