"""Publication's writes: the run's lock (the kernel's fence), the attempt row, and the
commit of a block — on PostgreSQL a new block in one statement whose text is made once
per process from the models (foundation/compiled.py), else statement by statement
through the ORM. No rule is decided here: the steps in ``publication.pipeline`` decide,
and these write what they decided. No event is appended here either."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db import DatabaseError, connection
from django.db.models import F

from foundation.compiled import (
    column_list,
    inserted_columns,
    marks,
    row_values,
    server_binding_cursor,
    statement_once,
    table,
    typed_marks,
)
from foundation.ids import new_publication_id
from publication.candidate import Candidate
from publication.models import (
    AnswerBlock,
    BlockDependency,
    BlockRevision,
    PublicationAttempt,
    SourceBinding,
)
from publication.receipts import Outcome, Written
from publication.revisions import same_digest_sql
from runs.lifecycle import lock_for_execution
from runs.models import Run

LOCKED_COLUMNS = ("status", "last_seq", "block_count", "revision_quota_used")


def lock_run(candidate: Candidate) -> Mapping[str, Any]:
    """Lock the run row: it serializes the run's counters, quotas and event seq.

    The kernel's fence (runs/lifecycle.py ``lock_for_execution``), with the four plain
    columns the commit decides on: an execution that lost the run (``RunFenced``)
    writes nothing, not even its refusal; an ended run's row is returned for the
    caller's ``RUN_ENDED``."""
    run = candidate.run
    row = lock_for_execution(run.pk, run.execution_epoch, LOCKED_COLUMNS, ended_ok=True)
    run.last_seq = row["last_seq"]
    return row


def fill_attempt(candidate: Candidate, outcome: str, **fields: Any) -> PublicationAttempt:
    attempt = candidate.attempt
    attempt.outcome = outcome
    attempt.effect = candidate.effect
    attempt.content = candidate.content
    attempt.source_hint = candidate.source_hint
    attempt.truncated = candidate.truncated
    attempt.cited_ids = candidate.cited_ids()
    for name, value in fields.items():
        setattr(attempt, name, value)
    return attempt


def save_attempt(
    attempt: PublicationAttempt, *, unless_same_digest: Candidate | None = None
) -> bool:
    """One statement: an UPDATE of the previewed row, or the INSERT of a new one.

    On PostgreSQL a fixed statement made once per process (the ORM's ``save()``
    compiles its INSERT on every call). ``unless_same_digest``: the INSERT stands
    back when the candidate's run already holds a current revision of its call with
    the same body digest (a possible duplicate, which is never previewed): False.
    """
    if connection.vendor != "postgresql":
        assert unless_same_digest is None  # the caller checks first
        if attempt.pk is None:
            attempt.save(force_insert=True)
        else:
            attempt.save(force_update=True)
        return True
    values = row_values(PublicationAttempt, attempt.__dict__)
    with server_binding_cursor() as cursor:
        if attempt.pk is not None:
            cursor.execute(
                statement_once("attempt:update", _attempt_update_sql), [*values, attempt.pk]
            )
            if cursor.rowcount != 1:
                raise DatabaseError("Forced update did not affect any rows.")  # as save()
            _remember_stored(attempt)
            return True
        if unless_same_digest is None:
            cursor.execute(statement_once("attempt:insert", _attempt_insert_sql), values)
        else:
            candidate = unless_same_digest
            cursor.execute(
                statement_once("attempt:insert-unless-same-digest", _attempt_insert_unless_sql),
                [*values, attempt.body_digest, candidate.run.pk, candidate.agent_call.pk],
            )
        inserted = cursor.fetchone()
    if inserted is None:
        return False
    attempt.pk = inserted[0]
    attempt._state.adding = False
    _remember_stored(attempt)
    return True


def _remember_stored(attempt: PublicationAttempt) -> None:
    """What this candidate's attempt row holds now (this process just wrote it), so the
    commit rewrites only the columns that changed since (``write_new_block``). The
    values are the attempt's own attributes, which the pipeline reassigns, never mutates."""
    attempt.__dict__["_stored"] = {
        attname: attempt.__dict__[attname] for attname, *_ in inserted_columns(PublicationAttempt)
    }


def _changed_since_stored(attempt: PublicationAttempt) -> tuple[str, ...] | None:
    """The attnames whose value differs from the stored row; None when it is unknown."""
    stored = attempt.__dict__.get("_stored")
    if stored is None:
        return None
    return tuple(
        attname
        for attname, *_ in inserted_columns(PublicationAttempt)
        if attempt.__dict__[attname] != stored[attname]
    )


def _attempt_insert_sql() -> str:
    columns = column_list(PublicationAttempt)
    return (
        f"INSERT INTO {table(PublicationAttempt)} ({', '.join(columns)})"  # noqa: S608
        f" VALUES ({marks(len(columns))}) RETURNING id"
    )


def _attempt_insert_unless_sql() -> str:
    columns = column_list(PublicationAttempt)
    return (
        f"INSERT INTO {table(PublicationAttempt)} ({', '.join(columns)})"  # noqa: S608
        f" SELECT {typed_marks(PublicationAttempt)} WHERE NOT EXISTS ({same_digest_sql()})"
        " RETURNING id"
    )


def _attempt_update_sql() -> str:
    columns = column_list(PublicationAttempt)
    return (
        f"UPDATE {table(PublicationAttempt)} SET "  # noqa: S608
        + ", ".join(f"{c} = %s" for c in columns)
        + " WHERE id = %s"
    )


def _new_block_sql(updated: tuple[str, ...] | None) -> str:
    """The one write of a new block (``write_new_block``): the attempt inserted
    (``updated`` None) or the previewed row's ``updated`` columns set."""
    block_cols = column_list(AnswerBlock)
    attempt_cols = column_list(PublicationAttempt)
    revision_cols = column_list(BlockRevision, ("attempt_id",))
    if updated is not None:
        columns = {attname: column for attname, *_, column in inserted_columns(PublicationAttempt)}
        attempt_cols = [columns[attname] for attname in updated] or ['"id"']
    if updated is None:
        attempt_sql = (
            f"INSERT INTO {table(PublicationAttempt)} ({', '.join(attempt_cols)})"  # noqa: S608
            f" SELECT {typed_marks(PublicationAttempt)} FROM blk RETURNING id"
        )
    else:  # the previewed row becomes the committed one
        attempt_sql = (
            f"UPDATE {table(PublicationAttempt)} SET "  # noqa: S608
            + ", ".join(f"{c} = %s" for c in attempt_cols)
            + " WHERE id = %s AND EXISTS (SELECT 1 FROM blk) RETURNING id"
        )
    return (
        f"WITH blk AS (INSERT INTO {table(AnswerBlock)} ({', '.join(block_cols)})"  # noqa: S608
        f" SELECT {typed_marks(AnswerBlock)} WHERE NOT EXISTS ({same_digest_sql()})"
        " RETURNING id),"
        f" att AS ({attempt_sql}),"
        f" rev AS (INSERT INTO {table(BlockRevision)} ({', '.join(revision_cols)}, attempt_id)"
        f" SELECT {typed_marks(BlockRevision, ('attempt_id',))}, att.id FROM att RETURNING id),"
        f" bnd AS (INSERT INTO {table(SourceBinding)} (revision_id, cited_id, citation_id,"
        " verified) SELECT rev.id, b.cited, b.citation, b.verified FROM rev,"
        " unnest(%s::varchar[], %s::varchar[], %s::boolean[]) AS b(cited, citation, verified)),"
        f" dep AS (INSERT INTO {table(BlockDependency)} (revision_id, depends_on_id)"
        " SELECT rev.id, d FROM rev, unnest(%s::varchar[]) AS d),"
        f" cnt AS (UPDATE {table(Run)} SET block_count = %s"
        " WHERE id = %s AND EXISTS (SELECT 1 FROM blk))"
        " SELECT att.id, rev.id FROM att, rev"
    )


def write_new_block(
    candidate: Candidate, row: Mapping[str, Any], digest: str, now: datetime
) -> Written | None:
    """A new block in one statement (PostgreSQL), under the run's lock.

    Block, attempt (inserted, or the previewed row updated), revision, bindings,
    dependencies and the block counter are written by one chain of
    data-modifying CTEs, each feeding the next — one round trip where the ORM
    makes six. Every part is conditional on the first: when the run already holds
    a current revision of this call with the same body digest, nothing is
    written and None is returned, so the caller runs the full duplicate check
    (bindings, dependencies, hint) and, unless it is a duplicate, the ORM path.
    The statement starts after the lock was taken, so it sees every commit that
    preceded ours: two identical candidates racing still never make two blocks.

    The statement's text is made once per process from the models; its rows are
    built from plain values (no block or revision instance: nothing reads them).
    """
    attempt = candidate.attempt
    block_id = new_publication_id()
    ordinal = row["block_count"] + 1
    previewed = attempt.pk is not None
    fill_attempt(candidate, Outcome.COMMITTED, block_id=block_id, revision=1)
    updated: tuple[str, ...] | None = None
    attempt_row = row_values(PublicationAttempt, attempt.__dict__)
    if previewed:
        # The previewed row becomes the committed one: only what changed is sent.
        updated = _changed_since_stored(attempt)
        if updated is None:  # not written by this process: every column
            updated = tuple(attname for attname, *_ in inserted_columns(PublicationAttempt))
        positions = {
            attname: i for i, (attname, *_) in enumerate(inserted_columns(PublicationAttempt))
        }
        attempt_row = [attempt_row[positions[attname]] for attname in updated] or [attempt.pk]
    run_id, call_id = candidate.run.pk, candidate.agent_call.pk
    bindings = candidate.bindings
    params = [
        *row_values(
            AnswerBlock,
            {
                "id": block_id,
                "run_id": run_id,
                "agent_call_id": call_id,
                "delivery_ordinal": ordinal,
                "origin": candidate.entry,
                "current_revision": 1,
                "created_at": now,
            },
        ),
        digest,
        run_id,
        call_id,
        *attempt_row,
        *([attempt.pk] if previewed else []),
        *row_values(
            BlockRevision,
            {
                "block_id": block_id,
                "run_id": run_id,
                "revision": 1,
                "content": candidate.content,
                "body_digest": digest,
                "source_hint": candidate.source_hint,
                "truncated": candidate.truncated,
                "committed_at": now,
            },
            ("attempt_id",),
        ),
        [cited for cited, _, _ in bindings],
        [ref.pk if ref is not None else None for _, ref, _ in bindings],
        [ok for _, _, ok in bindings],
        [d.pk for d in candidate.dependencies],
        ordinal,
        run_id,
    ]
    sql = statement_once(f"new_block:{updated}", lambda: _new_block_sql(updated))
    with server_binding_cursor() as cursor:
        cursor.execute(sql, params)
        written = cursor.fetchone()
    if written is None:
        attempt.block_id = attempt.revision = None  # nothing was written
        return None
    attempt.pk = written[0]
    attempt._state.adding = False
    attempt.__dict__.pop("_stored", None)  # committed: no later write starts from it
    return Written(
        block_id=block_id,
        delivery_ordinal=ordinal,
        revision=1,
        body_digest=digest,
        source_hint=candidate.source_hint,
        truncated=candidate.truncated,
    )


def write_with_the_orm(
    candidate: Candidate,
    target: AnswerBlock | None,
    row: Mapping[str, Any],
    digest: str,
    now: datetime,
) -> Written:
    """Block (or its next revision), counters, attempt, revision, bindings and
    dependencies, statement by statement (revisions, SQLite, a same-body block), under
    the run's lock."""
    attempt = candidate.attempt
    run_updates: dict[str, Any] = {}
    if target is not None and not attempt.quota_consumed:
        # The caller refused an exhausted quota under this same lock (revisions.quota_refusal).
        run_updates["revision_quota_used"] = F("revision_quota_used") + 1
        attempt.quota_consumed = True
    if target is None:
        block = AnswerBlock.objects.create(
            run_id=candidate.run.pk,
            agent_call=candidate.agent_call,
            delivery_ordinal=row["block_count"] + 1,
            origin=candidate.entry,
            current_revision=1,
            created_at=now,
        )
        run_updates["block_count"] = block.delivery_ordinal
    else:
        block = AnswerBlock.objects.select_for_update().get(pk=target.pk)
        block.current_revision += 1
        block.save(update_fields=["current_revision"])
    if run_updates:
        Run.objects.filter(pk=candidate.run.pk).update(**run_updates)
    save_attempt(
        fill_attempt(candidate, Outcome.COMMITTED, block=block, revision=block.current_revision)
    )
    revision = BlockRevision.objects.create(
        block=block,
        run_id=block.run_id,
        revision=block.current_revision,
        content=candidate.content,
        body_digest=digest,
        source_hint=candidate.source_hint,
        truncated=candidate.truncated,
        committed_at=now,
        attempt=attempt,
    )
    if candidate.bindings:
        SourceBinding.objects.bulk_create(
            SourceBinding(
                revision=revision,
                cited_id=cited,
                citation_id=ref.pk if ref is not None else None,
                verified=ok,
            )
            for cited, ref, ok in candidate.bindings
        )
    dependencies = [d for d in candidate.dependencies if d.pk != block.pk]
    if dependencies:
        BlockDependency.objects.bulk_create(
            BlockDependency(revision=revision, depends_on=dep) for dep in dependencies
        )
    return Written.of(revision)


def take_revision_quota(run: Run) -> None:
    """A visible modification consumes one of the run's revisions (under its lock)."""
    Run.objects.filter(pk=run.pk).update(revision_quota_used=F("revision_quota_used") + 1)


def forget_stored(attempt: PublicationAttempt) -> None:
    """The attempt's row was rolled back: the next save inserts it afresh."""
    attempt.pk = None
    attempt._state.adding = True
    attempt.__dict__.pop("_stored", None)
