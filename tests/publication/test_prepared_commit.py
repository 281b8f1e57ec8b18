"""The commit's fixed statements (the run's lock, the attempt, the one write of a new
block) are bound on the server and prepared once per connection; every commit still
runs each of them, and what they store is what the ORM's INSERTs would have stored
(docs/performance.md "Publication commit")."""

import pytest
from django.db import connection
from guardian.shortcuts import remove_perm

from citations.evidence import ProofDocument, SourceAccess, lease_of_version
from citations.models import CitationReference
from knowledge.models import Document
from publication.models import BlockRevision, PublicationAttempt, SourceBinding, SourceHint
from publication.pipeline import Outcome
from tests.publication.conftest import refs

pytestmark = pytest.mark.django_db

postgresql_only = pytest.mark.postgres(reason="prepared statements are PostgreSQL's")

# The kernel's fence (runs/lifecycle.py lock_for_execution) with the commit's columns.
LOCK = (
    'SELECT "status", "execution_epoch", "last_seq", "block_count", "revision_quota_used"'
    ' FROM "runs_run"'
)
WRITE = 'WITH blk AS (INSERT INTO "publication_answerblock"'
ATTEMPT = 'INSERT INTO "publication_publicationattempt"'


def prepared() -> dict[str, int]:
    """Each statement prepared on this connection → how often it ran."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return dict(cursor.fetchall())


def runs_of(prefix: str) -> list[int]:
    return [runs for sql, runs in prepared().items() if sql.startswith(prefix)]


@postgresql_only
def test_the_commits_statements_are_prepared_once_and_run_on_every_commit(live_run, publish):
    run = live_run()
    for n in range(3):
        assert publish(run, f"第 {n} 段，无引用。").outcome == Outcome.COMMITTED

    # One text each, planned once for this connection and run by each of the three
    # commits: the lock, the previewed attempt and the one write after a preview.
    assert runs_of(LOCK) == [3]
    assert runs_of(ATTEMPT) == [3]
    assert runs_of(WRITE) == [3]


@postgresql_only
def test_an_explicit_prepare_threshold_of_none_prepares_nothing_and_still_commits(
    live_run, publish, monkeypatch
):
    """``OPTIONS["prepare_threshold"] = None`` (SPARKTIDE_DB_PREPARE=0, behind PgBouncer in
    transaction mode) is kept: bound on the server, never prepared."""
    run = live_run()
    monkeypatch.setitem(connection.settings_dict["OPTIONS"], "prepare_threshold", None)
    monkeypatch.setattr(connection.connection, "prepare_threshold", None)

    receipts = [publish(run, "不预备的提交。"), publish(run, "无预览。", preview=False)]

    assert [r.outcome for r in receipts] == [Outcome.COMMITTED, Outcome.COMMITTED]
    assert runs_of(LOCK) == runs_of(ATTEMPT) == runs_of(WRITE) == []


@postgresql_only
def test_every_statement_of_a_commit_passes_the_execute_wrappers(live_run, publish):
    """Bound on the server, the statements still go through Django's cursor wrapper:
    what the query counts and the execute wrappers see is every statement sent."""
    run = live_run()
    seen: list[str] = []

    def wrapper(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        assert publish(run, "看得见的提交。").outcome == Outcome.COMMITTED

    kinds = {ATTEMPT: "attempt", LOCK: "lock", WRITE: "write"}
    # The preview's attempt, then the commit: its lock and its one write.
    assert [kinds[k] for sql in seen for k in kinds if sql.startswith(k)] == [
        "attempt",
        "lock",
        "write",
    ]


@pytest.mark.parametrize("preview", [True, False])
def test_the_one_write_stores_nulls_arrays_and_json_as_the_orm_would(live_run, publish, preview):
    """Typed placeholders: a binding whose ID resolves to nothing (its reference NULL in
    a NULL-only array), a verified one, the JSON body, the hint and the flags."""
    run = live_run()
    (public, *_), _ = refs(run)
    body = f"营收 [[cite:{public.pk}]] 伪 [[cite:cite_forgedforgedforgedforged0]]"

    receipt = publish(run, body, preview=preview)

    assert receipt.outcome == Outcome.COMMITTED
    revision = BlockRevision.objects.get(block_id=receipt.publication_id)
    assert revision.content == {"type": "text", "text": body}
    assert (revision.source_hint, revision.truncated) == (SourceHint.PARTIAL, False)
    bindings = SourceBinding.objects.filter(revision=revision)
    assert sorted((b.cited_id, b.citation_id, b.verified) for b in bindings) == sorted(
        [(public.pk, public.pk, True), ("cite_forgedforgedforgedforged0", None, False)]
    )
    attempt = PublicationAttempt.objects.get(pk=revision.attempt_id)
    assert (attempt.outcome, attempt.block_id, attempt.revision) == (
        Outcome.COMMITTED,
        receipt.publication_id,
        1,
    )
    assert attempt.reason == ""  # the field's default, as the ORM's INSERT writes it
    assert attempt.content == revision.content


def test_a_commit_citing_only_unknown_ids_stores_their_bindings_without_a_reference(
    live_run, publish
):
    """The references' array is then NULLs only: typed, it still binds."""
    run = live_run()

    receipt = publish(run, "伪 [[cite:cite_forgedforgedforgedforged0]]", preview=False)

    assert receipt.outcome == Outcome.COMMITTED
    (binding,) = SourceBinding.objects.filter(revision__block_id=receipt.publication_id)
    assert (binding.citation_id, binding.verified) == (None, False)


# --- the source proof's references, read as rows --------------------------------


def _orm_references(run, ids, now):
    """The same references as the ORM reads them, with the capability the proof reads."""
    return {
        r.pk: r
        for r in CitationReference.objects.filter(pk__in=ids)
        .select_related("version__knowledge", "document__version__knowledge")
        .annotate(app_lease_current=lease_of_version(run.app.pk, now))
    }


@pytest.mark.parametrize("memo_readable", [True, False])
def test_the_proof_rows_decide_every_reference_as_the_orm_instances_do(
    live_run, alice, knowledge, memo_readable
):
    run = live_run()
    public, memo = refs(run)
    if not memo_readable:
        remove_perm("knowledge.read_document", alice, knowledge.private_doc)
    ids = [r.pk for r in public + memo]
    rows = SourceAccess(run).proof_references(ids, run.agent_calls.get(depth=0))
    by_orm = SourceAccess(run)
    instances = _orm_references(run, ids, by_orm.now)
    by_orm.learn(instances.values())

    decided = {pk: SourceAccess(run) for pk in ids}  # one request each: nothing shared
    for pk, access in decided.items():
        access.learn([rows[pk]])
    assert {pk: decided[pk].reference_ok(rows[pk]) for pk in ids} == {
        pk: by_orm.reference_ok(instances[pk]) for pk in ids
    }
    assert {pk: decided[pk].reference_ok(rows[pk]) for pk in ids} == {
        **{r.pk: True for r in public},
        **{r.pk: memo_readable for r in memo},
    }
    for pk in ids:
        row, instance = rows[pk], instances[pk]
        assert (row.run_id, row.agent_call_id, row.version_id, row.document_id) == (
            instance.run_id,
            instance.agent_call_id,
            instance.version_id,
            instance.document_id,
        )
        assert row.in_view is True  # the root call retrieved each of them


def test_a_restricted_document_stays_a_document_and_an_open_one_is_a_row(live_run):
    """guardian checks object permissions on a model instance; an open document needs
    only its version's tenant, which the row shares with its reference."""
    run = live_run()
    (public, *_), (memo, *_) = refs(run)

    rows = SourceAccess(run).proof_references([public.pk, memo.pk], run.agent_calls.get(depth=0))

    assert isinstance(rows[memo.pk].document, Document)
    assert rows[memo.pk].document.version.knowledge.tenant_id == run.tenant_id
    assert isinstance(rows[public.pk].document, ProofDocument)
    assert rows[public.pk].document.version is rows[public.pk].version


@postgresql_only
def test_the_proof_statement_is_prepared_once_and_run_by_every_commit(live_run, publish):
    run = live_run()
    (public, *_), _ = refs(run)
    for n in range(2):
        receipt = publish(run, f"第 {n} 段 [[cite:{public.pk}]]", preview=False)
        assert receipt.outcome == Outcome.COMMITTED

    proof = [runs for sql, runs in prepared().items() if 'AS "in_view"' in sql]
    assert proof == [2]
