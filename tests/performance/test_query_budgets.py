"""Query budgets of the hot paths (docs/performance.md): a regression fails here.

Timings live in bench/; these tests count statements only. Publication is
counted as in production (``transaction=True``: no test savepoints), so the
BEGIN and COMMIT that Django logs are part of each count. Every budget that
guards a rule has a behavioural test next to it: fewer statements must never
mean a rule skipped.
"""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from citations.models import CitationReference
from knowledge.models import Chunk
from publication.models import AnswerBlock, BlockRevision, SourceBinding, SourceHint
from publication.pipeline import Outcome, publish_candidate
from publication.reader import RunReader
from runs.events import RunEnded, append_event
from runs.models import Run, RunEvent
from tests.factories import client_for

# citations cited → statements of publish_candidate, with and without the preview.
# Commit: BEGIN, lock, one write of block + attempt + revision + bindings + counters,
# one append of answer.published, COMMIT. The preview: BEGIN, the attempt (inserted only
# when no current revision of the call has the same body digest: the duplicate check in
# the same statement), one append of answer.preview (it locks and checks the run), COMMIT.
# Citations add one lookup (the references with their lease and whether each is in the
# call's evidence view, in one statement) and the owner's tenant; the restricted memo,
# whose ACL is guardian's two queries, is among the first three hits of 营收 since the
# ranking is BM25 (a short page holding the word: docs/retrieval.md), so 3 citations
# reach it as 20 do.
PUBLISH_BUDGETS = {
    (0, False): 5,
    (0, True): 9,
    (3, False): 9,
    (3, True): 13,
    (20, False): 9,
    (20, True): 13,
}


def _running(run: Run) -> Run:
    return Run.objects.select_related("tenant", "app", "owner").get(pk=run.pk)


def _cites(run: Run, n: int) -> list[str]:
    """``n`` citation IDs of the run, repeating its references when it holds fewer."""
    ids = list(
        CitationReference.objects.filter(run=run).order_by("ordinal").values_list("pk", flat=True)
    )
    return [ids[i % len(ids)] for i in range(n)]


def _body(text: str, cites: list[str]) -> str:
    # Repeated IDs are bound once: 20 distinct markers need 20 distinct IDs or
    # invented ones (kept, unverified) — both are real candidates.
    return text + "".join(f" [[cite:{c}]]" for c in dict.fromkeys(cites))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("citations", "preview"), sorted(PUBLISH_BUDGETS))
def test_publishing_a_text_block_stays_within_its_statement_budget(
    live_run, django_assert_num_queries, citations, preview
):
    run = _running(live_run({"search": "营收", "topK": 20}))
    root = run.agent_calls.get(depth=0)
    body = _body(f"营收增长（{citations}）", _cites(run, citations))

    with django_assert_num_queries(PUBLISH_BUDGETS[(citations, preview)]):
        receipt = publish_candidate(run=run, agent_call=root, entry="B", body=body, preview=preview)

    assert receipt.outcome == Outcome.COMMITTED
    revision = BlockRevision.objects.get(block_id=receipt.publication_id)
    assert revision.attempt.outcome == Outcome.COMMITTED
    assert SourceBinding.objects.filter(revision=revision).count() == len(
        set(_cites(run, citations))
    )
    published = RunEvent.objects.get(
        run=run, type="answer.published", data__publicationId=receipt.publication_id
    )
    assert published.data["deliveryOrdinal"] == receipt.delivery_ordinal
    assert Run.objects.get(pk=run.pk).block_count == receipt.delivery_ordinal


# --- the rules behind the one-statement commit -------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_identical_candidate_without_a_preview_is_unchanged_not_a_second_block(live_run):
    """The commit's single write refuses to run when a same-body current revision
    exists; the full duplicate check under the lock then answers UNCHANGED."""
    run = _running(live_run())
    root = run.agent_calls.get(depth=0)
    body = _body("营收增长12%", _cites(run, 1))
    first = publish_candidate(run=run, agent_call=root, entry="B", body=body, preview=False)
    again = publish_candidate(run=run, agent_call=root, entry="B", body=body, preview=False)

    assert (first.outcome, again.outcome) == (Outcome.COMMITTED, Outcome.UNCHANGED)
    assert again.publication_id == first.publication_id
    assert AnswerBlock.objects.filter(run=run).count() == 1
    assert RunEvent.objects.filter(run=run, type="answer.published").count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_same_body_with_another_proof_is_still_a_new_block(live_run):
    """Same digest, different bindings: not a duplicate — the statement-by-statement
    path commits it after the single write stood back."""
    run = _running(live_run())
    root = run.agent_calls.get(depth=0)
    text = "营收增长12%"
    first = publish_candidate(run=run, agent_call=root, entry="B", body=text, preview=False)
    # The same text from another call of the run has the same digest but is not a
    # duplicate of this call's block; here: the same call, cited differently.
    cited = publish_candidate(
        run=run, agent_call=root, entry="B", body=_body(text, _cites(run, 1)), preview=False
    )
    assert (first.outcome, cited.outcome) == (Outcome.COMMITTED, Outcome.COMMITTED)
    assert cited.publication_id != first.publication_id
    assert Run.objects.get(pk=run.pk).block_count == 2


@pytest.mark.django_db(transaction=True)
def test_a_commit_into_an_ended_run_writes_nothing_and_appends_nothing(live_run):
    run = _running(live_run())
    root = run.agent_calls.get(depth=0)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED)
    events = RunEvent.objects.filter(run=run).count()
    for preview in (True, False):
        receipt = publish_candidate(
            run=run, agent_call=root, entry="B", body="营收", preview=preview
        )
        assert (receipt.outcome, receipt.reason) == (Outcome.REJECTED, "RUN_ENDED")
    assert not AnswerBlock.objects.filter(run=run).exists()
    assert RunEvent.objects.filter(run=run).count() == events


# --- the event log -----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_append_is_one_statement_and_takes_the_next_seq(live_run, django_assert_num_queries):
    run = _running(live_run())
    last = Run.objects.get(pk=run.pk).last_seq
    with django_assert_num_queries(1):
        event = append_event(run, "bench.tick", {"n": 1})
    assert (event.seq, run.last_seq) == (last + 1, last + 1)
    stored = RunEvent.objects.get(run=run, seq=last + 1)
    assert (stored.pk, stored.type, stored.data) == (event.pk, "bench.tick", {"n": 1})
    assert Run.objects.get(pk=run.pk).last_seq == last + 1


@pytest.mark.django_db(transaction=True)
def test_an_append_to_an_ended_run_is_refused_and_leaves_the_log_as_it_was(live_run):
    run = _running(live_run())
    Run.objects.filter(pk=run.pk).update(status=Run.Status.COMPLETED)
    before = Run.objects.get(pk=run.pk).last_seq
    with pytest.raises(RunEnded):
        append_event(run, "bench.tick")
    assert Run.objects.get(pk=run.pk).last_seq == before
    assert not RunEvent.objects.filter(run=run, type="bench.tick").exists()


# --- the preview --------------------------------------------------------------------


def _preview_url(run: Run, reference: CitationReference) -> str:
    return f"/v1/apps/{run.app.slug}/runs/{run.pk}/citations/{reference.pk}/preview"


def _public_reference(run: Run) -> CitationReference:
    return (
        CitationReference.objects.filter(run=run, document__restricted=False)
        .order_by("ordinal")
        .first()
    )


def test_a_managed_preview_takes_three_queries_on_every_click(
    live_run, alice, django_assert_num_queries
):
    """Token, the run with the owner's membership + permission now, and the citation
    with its version's lease now, the chunk re-read (no cache: every click re-fetches
    the source) and the answer text that cites it (highlights) in the same statement."""
    run = live_run()
    url = _preview_url(run, _public_reference(run))
    client = client_for(alice)
    assert client.get(url).status_code == 200  # the token's last_used_at is now fresh
    for _ in range(2):
        with django_assert_num_queries(3):
            response = client.get(url)
        assert response.status_code == 200
        assert response.json()["content"]


def test_a_chunk_altered_after_it_was_shown_is_caught_on_the_next_click(live_run, alice):
    """Nothing of the source is kept between clicks: the digest check sees the change."""
    run = live_run()
    reference = _public_reference(run)
    client = client_for(alice)
    assert client.get(_preview_url(run, reference)).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Chunk._meta.db_table} SET text = %s WHERE id = %s",
            ["篡改的文本", reference.chunk_id],
        )
    for _ in range(2):
        assert client.get(_preview_url(run, reference)).json()["code"] == "CITATION_SOURCE_CHANGED"


# --- reader, replay, ticket ---------------------------------------------------------


def _fill(run: Run, blocks: int) -> None:
    root = run.agent_calls.get(depth=0)
    cite = _cites(run, 1)[0]
    for i in range(blocks):
        publish_candidate(
            run=run, agent_call=root, entry="B", body=f"段落{i} [[cite:{cite}]]", preview=False
        )


def _count(fn) -> int:
    with CaptureQueriesContext(connection) as context:
        fn()
    return len(context)


@pytest.mark.parametrize("blocks", [1, 100])
def test_reading_the_answer_takes_six_queries_for_1_or_100_blocks(
    live_run, django_assert_num_queries, blocks
):
    """Blocks, revisions, bindings with their references, the lease check, the
    owner's tenant, dependencies: the same six whatever the number of blocks."""
    run = live_run()
    _fill(run, blocks)
    run = _running(run)
    with django_assert_num_queries(READER_BUDGET):
        views = RunReader(run).blocks()
    assert len(views) == blocks


READER_BUDGET = 6


def test_a_replay_page_of_events_takes_a_fixed_number_of_queries(
    live_run, alice, django_assert_num_queries
):
    """Token, run, the page of events, the reader's six (visibility of every
    answer event), the terminal check."""
    run = live_run()
    _fill(run, 30)
    client = client_for(alice)
    url = f"/v1/apps/{run.app.slug}/runs/{run.pk}/events?after=0&limit=100"
    client.get(url)  # the token's last_used_at is now fresh
    with django_assert_num_queries(REPLAY_BUDGET):
        page = client.get(url).json()
    assert len(page["events"]) > 30
    assert [e["seq"] for e in page["events"]] == sorted(e["seq"] for e in page["events"])


REPLAY_BUDGET = 9  # 10 before the history permission joined the run's query


def test_issuing_an_event_ticket_takes_a_fixed_number_of_queries(
    live_run, alice, django_assert_num_queries
):
    """Token, the run with the owner's membership and history permission (one query), the
    ticket row."""
    run = live_run()
    client = client_for(alice)
    url = f"/v1/apps/{run.app.slug}/runs/{run.pk}/events/ticket"
    client.post(url)
    with django_assert_num_queries(TICKET_BUDGET):
        response = client.post(url)
    assert response.status_code == 201
    assert response.json()["ticket"]


TICKET_BUDGET = 3  # 4 before the history permission joined the run's query


@pytest.mark.django_db(transaction=True)
def test_the_compiled_statements_take_each_calls_own_values(live_run, alice):
    """The source proof and the preview's reference read run a statement compiled once
    per process (foundation/compiled.py): every value of a call is re-bound, so a second
    run gets its own references, and another run's citation stays unknown."""
    from foundation import compiled

    first, second = live_run(), live_run()
    root = second.agent_calls.get(depth=0)
    for run in (first, second):
        cite = _cites(run, 1)[0]
        receipt = publish_candidate(
            run=run,
            agent_call=run.agent_calls.get(depth=0),
            entry="B",
            body=_body("北辰医药营收增长。", [cite]),
            preview=False,
        )
        assert (receipt.outcome, receipt.source_hint) == (Outcome.COMMITTED, SourceHint.VERIFIED)
        client = client_for(alice)
        assert (
            client.get(_preview_url(run, CitationReference.objects.get(pk=cite))).json()["id"]
            == cite
        )
    # The first run's citation cited from the second run's call: not its own, unverified.
    foreign = _cites(first, 1)[0]
    receipt = publish_candidate(
        run=second, agent_call=root, entry="B", body=_body("营收。", [foreign]), preview=False
    )
    assert (receipt.outcome, receipt.source_hint) == (Outcome.COMMITTED, SourceHint.UNVERIFIED)
    response = client_for(alice).get(
        f"/v1/apps/{second.app.slug}/runs/{second.pk}/citations/{foreign}/preview"
    )
    assert response.json()["code"] == "CITATION_NOT_AVAILABLE"
    # Both statements were compiled (no placeholder fell back to the QuerySet as written).
    built = {key[1] if isinstance(key[1], str) else key[1][0]: c for key, c in compiled.cache()}
    assert built["proof_references"] is not None
    assert built["access_reference"] is not None


def test_the_sockets_page_is_compiled_once_and_reads_each_calls_own_range(live_run):
    """A socket's page of the log (delivery.fanout.read_frames) runs its statement
    compiled once per page size: each read gets its own run, its own bounds, and the
    rows the QuerySet as written gives (seqs, types, the stored JSON, ``at`` typed)."""
    from delivery import fanout
    from foundation import compiled

    first, second = _running(live_run()), _running(live_run())
    start = {}
    for run in (first, second):
        start[run.pk] = Run.objects.get(pk=run.pk).last_seq
        for i in range(5):
            append_event(run, "run.progress", {"run": run.pk, "i": i})
    for run, offset in ((first, 0), (second, 2), (first, 3)):
        after = start[run.pk] + offset
        rows = fanout._page_rows(run.pk, after=after, limit=2)
        expected = list(fanout._page(run_id=run.pk, after=after, last=after + 2, limit=2))
        assert [tuple(row) for row in rows] == [tuple(row) for row in expected]
        assert [seq for seq, *_ in rows] == [after + 1, after + 2]
        assert all(json.loads(data)["run"] == run.pk for _, _, data, _ in rows)
        assert all(
            at == event.at for (*_, at), event in zip(rows, _events_after(run, after), strict=True)
        )
    assert dict(compiled.cache())[(connection.vendor, ("read_frames", 2))] is not None


def _events_after(run: Run, after: int) -> list[RunEvent]:
    return list(RunEvent.objects.filter(run=run, seq__gt=after).order_by("seq")[:2])


# --- a page of the log, and the duplicate check, read only their own rows -----------


def _rows_read(sql: str, table: str, params: tuple = ()) -> int:
    """Rows the scans of ``table`` produced when ``sql`` ran (EXPLAIN ANALYZE), over
    every loop of each scan."""

    def walk(node: dict) -> int:
        rows = (
            node["Actual Rows"] * node["Actual Loops"] if node.get("Relation Name") == table else 0
        )
        return rows + sum(walk(child) for child in node.get("Plans", []))

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        (plan,) = cursor.fetchone()
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return walk(plan[0]["Plan"])


@pytest.mark.skipif(connection.vendor != "postgresql", reason="EXPLAIN ANALYZE is PostgreSQL's")
@pytest.mark.parametrize("reader", ["socket", "rest"])
def test_a_page_of_the_log_reads_only_its_own_rows_whatever_the_plan(live_run, reader):
    """Every reader's page (the socket's and GET …/events) reads at most its limit of
    rows, even when the planner does not take the index in seq order: with index scans
    off (the plan PostgreSQL chose for a run its statistics did not count yet), a page
    written as ``seq > after … LIMIT`` read every later event of the run and sorted it."""
    from api.selectors import events_page
    from delivery import fanout

    run = live_run()
    start = run.last_seq
    RunEvent.objects.bulk_create(
        RunEvent(run=run, seq=start + i, type="run.progress", data={"i": i}, at=run.created_at)
        for i in range(1, 2001)
    )
    Run.objects.filter(pk=run.pk).update(last_seq=start + 2000)
    run = _running(run)
    read = {
        "socket": lambda: fanout.read_frames(run, after=start + 100, limit=50),
        "rest": lambda: events_page(run, after=start + 100, limit=50),
    }[reader]
    executed = []

    def capture(execute, sql, params, many, context):
        executed.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        read()
    # The socket's page is bound on the server: its text keeps its placeholders.
    (page,) = [
        (sql, params)
        for sql, params in executed
        if RunEvent._meta.db_table in sql and '"seq" >' in sql
    ]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("SET LOCAL enable_indexonlyscan = off")
    page_sql, page_params = page
    assert _rows_read(page_sql, RunEvent._meta.db_table, tuple(page_params or ())) <= 50


@pytest.mark.skipif(connection.vendor != "postgresql", reason="EXPLAIN ANALYZE is PostgreSQL's")
@pytest.mark.parametrize("scans", ["as planned", "no index scans"])
def test_the_duplicate_check_reads_only_the_runs_revisions_of_that_body_however_long_the_run(
    live_run, scans
):
    """Every candidate asks whether its run and call already hold a current revision
    of the same body. Written as a join of the run's blocks to their revisions, the
    plan PostgreSQL chose for a run its statistics did not know yet read every block
    of the call and its revision: 5,430 rows a commit, 12.8 ms, in a long run of the
    publication bench. It reads the revisions of this body in this run, and their
    blocks, and nothing else."""
    from publication.revisions import same_digest_sql as _same_digest_sql

    run = _running(live_run())
    root = run.agent_calls.get(depth=0)
    blocks = AnswerBlock.objects.bulk_create(
        AnswerBlock(run=run, agent_call=root, delivery_ordinal=i, origin="B") for i in range(300)
    )
    BlockRevision.objects.bulk_create(
        BlockRevision(block=block, run=run, revision=1, content={}, body_digest=f"{i:064d}")
        for i, block in enumerate(blocks)
    )
    if scans == "no index scans":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_indexscan = off")
            cursor.execute("SET LOCAL enable_indexonlyscan = off")
    check = f"SELECT EXISTS ({_same_digest_sql()})"
    for digest, found in ((f"{7:064d}", True), ("f" * 64, False)):
        params = (digest, run.pk, root.pk)
        with connection.cursor() as cursor:
            cursor.execute(check, params)
            assert cursor.fetchone()[0] is found
        assert _rows_read(check, AnswerBlock._meta.db_table, params) <= 1
        assert _rows_read(check, BlockRevision._meta.db_table, params) <= 1
