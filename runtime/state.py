"""What one agent call carries between the engine, its provider and its tools."""

from dataclasses import dataclass, field
from typing import Any, cast

from django.db import connection, transaction
from django.db.models import Field
from django.utils import timezone

from citations.evidence import evidence_handles, evidence_view
from publication.models import AnswerBlock
from runs.events import refusal
from runs.lifecycle import fence_params, fence_statement, lock_for_execution
from runs.models import AgentCall, JournalEntry, Run
from runtime.durable import durable


class RunCancelled(Exception):
    pass


class StepLimitReached(Exception):
    pass


@dataclass
class CallState:
    """What the provider may read about one agent call (AgentState protocol)."""

    run: Run
    call: AgentCall
    instructions: str
    task: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    # Earlier turns of the run's conversation (runtime/conversation.py); root call only.
    history: list[dict[str, Any]] = field(default_factory=list)
    # The live turn's text stream (runtime/streaming.py); the provider calls ``on_text``
    # with content deltas as they arrive. None for a sub-agent: its text is not an answer.
    stream: Any = None
    on_text: Any = None

    # The provider reads these inside its turn: read again through a lost connection, so
    # a turn is not cut by the database (a model is never asked the same turn twice).
    def evidence_ids(self) -> list[str]:
        return durable(
            f"run {self.run.pk}: evidence", lambda: [ref.pk for ref in evidence_view(self.call)]
        )

    def publication_ids(self) -> list[str]:
        return durable(
            f"run {self.run.pk}: publications",
            lambda: list(
                AnswerBlock.objects.filter(run=self.run)
                .order_by("delivery_ordinal")
                .values_list("pk", flat=True)
            ),
        )

    def numeric_handles(self) -> list[str]:
        return durable(
            f"run {self.run.pk}: handles",
            lambda: [h.pk for h in evidence_handles(self.call)],
        )

    def search_results(self) -> list[dict[str, Any]]:
        return self.results


def journal(
    run: Run, call: AgentCall | None, kind: str, *, tool: str = "", step: int = 0, **data: Any
) -> None:
    """Write one journal entry now."""
    writer = Journal(run)
    writer.add(call, kind, tool=tool, step=step, **data)
    writer.flush()


_COLUMNS = ("run_id", "agent_call_id", "kind", "tool", "step", "data", "at")


class Journal:
    """A run's journal writes, batched without moving any of them past a side effect.

    ``add`` keeps an entry; ``flush`` writes what is kept in one statement. The engine
    flushes before everything that acts outside the journal — a tool's handler, a
    Publication candidate, a model turn (the step's heartbeat carries the entries:
    ``heartbeat_statement``), the end of an agent call — so when any side effect
    happens, the journal on disk is exactly what it was when each entry was written at
    once (docs/reliability.md: a tool call is journaled before it runs, a commit's
    note before ``after_journal_write``). A crash between an ``add`` and its flush is
    the crash just before that entry's own write: nothing happened in between.
    """

    def __init__(self, run: Run) -> None:
        self.run = run
        self.pending: list[tuple[Any, ...]] = []

    def add(
        self, call: AgentCall | None, kind: str, *, tool: str = "", step: int = 0, **data: Any
    ) -> None:
        self.pending.append(
            (self.run.pk, call.pk if call else None, kind, tool, step, data, timezone.now())
        )

    def flush(self) -> None:
        """Write the kept entries now, under the run's fence: nothing once the run was
        taken over (``RunFenced``) or has ended (``RunEnded``)."""
        if not self.pending:
            return
        run = self.run
        if connection.vendor != "postgresql":
            with transaction.atomic():
                lock_for_execution(run.pk, run.execution_epoch)
                JournalEntry.objects.bulk_create(
                    [JournalEntry(**dict(zip(_COLUMNS, row, strict=True))) for row in self.pending]
                )
            self.pending.clear()
            return
        kept = len(self.pending)
        insert, params = self.insert_statement("EXISTS (SELECT 1 FROM fence)")
        with connection.cursor() as cursor:
            cursor.execute(
                f"WITH fence AS ({fence_statement()}) {insert}",
                [*fence_params(run.pk, run.execution_epoch), *params],
            )
            written = cursor.rowcount
        if written != kept:
            raise refusal(run.pk, run.execution_epoch, "the journal")

    def insert_statement(self, only_if: str) -> tuple[str, list[Any]]:
        """PostgreSQL: the INSERT of every kept entry (emptied), in the order they were
        kept, written only if ``only_if`` holds — the fence of the statement carrying
        it (a CTE that locked the run under this execution's epoch)."""
        rows, self.pending = self.pending, []
        data_field = JournalEntry._meta.get_field("data")
        params: list[Any] = []
        for row in rows:
            params += [*row[:5], data_field.get_db_prep_value(row[5], connection), row[6]]
        values = ", ".join([_typed_row()] * len(rows))
        table = JournalEntry._meta.db_table
        return (
            f"INSERT INTO {table} ({', '.join(_COLUMNS)})"  # noqa: S608
            f" SELECT * FROM (VALUES {values}) AS kept WHERE {only_if}",
            params,
        )


def _typed_row() -> str:
    """One row of kept entries, each value cast to its column's type (a VALUES list
    under a SELECT has no target columns to take types from)."""
    casts = []
    for column in _COLUMNS:
        field = cast("Field[Any, Any]", JournalEntry._meta.get_field(column.removesuffix("_id")))
        target = cast("Field[Any, Any]", getattr(field, "target_field", field))
        if target.get_internal_type() in ("CharField", "TextField"):
            casts.append("%s::text")  # the column's own length is checked on insert
        elif field.is_relation:
            casts.append(f"%s::{target.rel_db_type(connection)}")
        else:
            casts.append(f"%s::{target.db_type(connection)}")
    return f"({', '.join(casts)})"
