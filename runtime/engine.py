"""The run engine: drives agent calls and the run (tools: runtime/tools.py).

One agent call: ask the provider for the next turn → its plain text becomes a
Publication candidate (entry A) → its tool calls run → repeat until the provider
is done, the step limit is hit, the run is cancelled, or the provider fails.

The runtime records how the run ended; it never decides whether a committed
block exists — Publication's store does (PARTIAL = failed after ≥ 1 block).
"""

import json
import logging
import threading
from collections.abc import Callable
from contextlib import nullcontext, suppress
from dataclasses import replace
from typing import Any, cast

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Field, Q
from django.utils import timezone

from agents.providers import ProviderError, get_provider
from agents.providers.base import Turn
from foundation.errors import SparkTideError
from foundation.text_boundary import storable
from knowledge.context import TrustedContext
from publication.reader import committed_block_count
from publication.verification import verify_answer
from runs.events import IF_APPENDED, RunEnded, RunFenced, append_event, refusal
from runs.lifecycle import claim_run_with_root, finish_run, lock_for_execution
from runs.models import AgentCall, JournalEntry, Run
from runs.reasons import RunReason
from runtime.conversation import conversation_history
from runtime.durable import CONNECTION_ERRORS, Landed, discard_connection, durable, event_landed
from runtime.state import CallState, Journal, RunCancelled, StepLimitReached
from runtime.streaming import TurnStream, close_reason
from runtime.tools import Tools

logger = logging.getLogger(__name__)


def _heartbeat(run: Run, journal: Journal | None = None) -> None:
    """Record liveness and read the cancel flag: one round trip on the usual path.

    Fenced like every write of the execution: only while the run is RUNNING under the
    epoch this worker claimed (``RunFenced`` once it was taken over, nothing written).
    On PostgreSQL the journal entries kept since the last side effect are written by
    the same statement, only if the beat found the run (``alive``)."""
    epoch = run.execution_epoch
    if connection.vendor == "postgresql":
        beat = (
            f"WITH alive AS (UPDATE {Run._meta.db_table} SET heartbeat_at ="  # noqa: S608
            " CASE WHEN cancel_requested_at IS NULL THEN %s ELSE heartbeat_at END"
            " WHERE id = %s AND status = %s AND execution_epoch = %s"
            " RETURNING cancel_requested_at IS NULL AS going)"
        )
        params: list[Any] = [timezone.now(), run.pk, Run.Status.RUNNING, epoch]
        if journal is not None and journal.pending:
            insert, kept = journal.insert_statement("EXISTS (SELECT 1 FROM alive)")
            beat += f", journaled AS ({insert})"
            params += kept
        with connection.cursor() as cursor:
            cursor.execute(beat + " SELECT going FROM alive", params)  # noqa: S608
            found = cursor.fetchone()
        if found is None:
            raise refusal(run.pk, epoch, "the heartbeat")
        going = found[0]
    else:
        with transaction.atomic():
            row = lock_for_execution(run.pk, epoch, ("cancel_requested_at",))
            if row["status"] != Run.Status.RUNNING:
                raise RunEnded(f"{run.pk} is {row['status']}")
            if journal is not None:
                journal.flush()
            going = row["cancel_requested_at"] is None
            if going:
                Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
    if not going:
        raise RunCancelled


def _release_connection() -> None:
    """The step boundary: give the run's connection back (to the pool) while the
    model thinks, so a session cut during the wait costs the next step a fresh
    connection, not the run (docs/reliability.md). Never inside a transaction."""
    if not connection.in_atomic_block:
        connection.close()


class RunHeartbeats:
    """The liveness of every run this process executes, from one thread.

    Beats every SPARKTIDE_HEARTBEAT_SECONDS while a run executes, so a slow model
    call (minutes) is not mistaken for a dead worker by recovery: all the runs in
    flight in one UPDATE. A run joins with ``add`` and leaves with ``discard`` (set
    operations: no thread started or joined per run). The thread starts with the
    first run of the process and lives as long as it (a daemon). It holds a
    database connection only for the beat itself, and a beat lost to a database
    error is retried at the next one.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: dict[str, int] = {}  # run ID → the epoch this process executes it under
        self.thread: threading.Thread | None = None
        self.stopped = threading.Event()

    def add(self, run_id: str, epoch: int) -> None:
        with self.lock:
            self.runs[run_id] = epoch
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(
                    target=self._beat_forever, name="sparktide-run-heartbeats", daemon=True
                )
                self.thread.start()

    def discard(self, run_id: str) -> None:
        with self.lock:
            self.runs.pop(run_id, None)

    def _beat_forever(self) -> None:
        while not self.stopped.wait(settings.SPARKTIDE_HEARTBEAT_SECONDS):
            self.beat()

    def stop(self) -> None:
        """End the thread (tests; a process's own instance lives as long as it)."""
        self.stopped.set()
        if self.thread is not None:
            self.thread.join(timeout=5)

    def beat(self) -> int:
        """One beat of every run in flight (one statement); how many rows it touched.
        A run is beaten only under the epoch this process claimed it with: a run taken
        over (recovered, handed back) is not kept alive by the execution that lost it."""
        with self.lock:
            runs = dict(self.runs)
        if not runs:
            return 0
        run_ids = list(runs)
        ours = Q()
        for run_id, epoch in runs.items():
            ours |= Q(pk=run_id, execution_epoch=epoch)
        try:
            return Run.objects.filter(ours, status=Run.Status.RUNNING).update(
                heartbeat_at=timezone.now()
            )
        except DatabaseError as exc:
            logger.warning("heartbeat of %d run(s) missed: %s", len(run_ids), exc)
            return 0
        finally:
            connection.close()


heartbeats = RunHeartbeats()


class Engine(Tools):
    def __init__(self, run: Run) -> None:
        self.run = run
        self.journal = Journal(run)
        self.context = TrustedContext(
            tenant=run.tenant.key,
            app=run.app.slug,
            user=run.owner.get_username(),
            business_session_id=run.session_id,
        )

    # -- agent calls ---------------------------------------------------------

    def run_call(self, call: AgentCall) -> str:
        run = self.run
        version = call.agent_version
        started = {
            "agentCallId": call.public_id,
            "depth": call.depth,
            **({"parentAgentCallId": f"call_{call.parent_id}"} if call.parent_id else {}),
            "agent": version.agent.key,
            "agentVersion": version.version,
        }
        with suppress(Landed):
            durable(
                f"run {run.pk}: agent.started",
                lambda: append_event(run, "agent.started", started, epoch=run.execution_epoch),
                landed=event_landed(run.pk, "agent.started", {"agentCallId": call.public_id}),
            )
        state = CallState(run=run, call=call, instructions=version.instructions, task=call.task)
        if call.depth == 0:
            state.history = durable(f"run {run.pk}: history", lambda: conversation_history(run))
        state.messages.append({"role": "user", "content": call.task})
        try:
            # Inside the try: a config the provider refuses (stored before a rule
            # tightened) ends this call FAILED with its agent.completed.
            provider = get_provider(version.model)
            for step in range(1, version.max_steps + 1):
                durable(
                    f"run {run.pk}: heartbeat",
                    lambda: _heartbeat(run, self.journal),
                    journal=self.journal,
                )
                _release_connection()
                if call.depth == 0:
                    state.stream = TurnStream(run, call, step)
                    state.on_text = _preview_feed(state.stream)
                turn = _storable_turn(provider.next_turn(state))
                if state.stream is not None:
                    # What the coalescing interval still holds goes out before Publication
                    # starts: readers have the whole turn before its block, and the last
                    # delta does not race the stream's close event.
                    durable(f"run {run.pk}: stream", state.stream.flush)
                self.journal.add(
                    call,
                    JournalEntry.Kind.STEP,
                    step=step,
                    text=turn.text,
                    toolCalls=[t.name for t in turn.tool_calls],
                )
                published = None
                if turn.text.strip():
                    state.texts.append(turn.text)
                    if call.depth == 0:
                        published = self._publish(call, step, entry="A", body=turn.text)
                if state.stream is not None:
                    # Its preview or receipt now stands where the streamed text stood.
                    _close_stream(
                        run,
                        call,
                        step,
                        state.stream,
                        close_reason(published and published["receipt"]),
                    )
                    state.stream = state.on_text = None
                message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
                if turn.tool_calls:
                    message["tool_calls"] = [
                        {
                            "id": t.id,
                            "type": "function",
                            "function": {"name": t.name, "arguments": t.arguments},
                        }
                        for t in turn.tool_calls
                    ]
                state.messages.append(message)
                for tool_call in turn.tool_calls:
                    result = self.tool_entry(call, state, step, tool_call)
                    state.messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": tool_call.id,
                            "content": json.dumps(result, ensure_ascii=False),
                        }
                    )
                if turn.done:
                    break
            else:
                raise StepLimitReached(f"{version} reached its limit of {version.max_steps} steps")
        except BaseException as exc:
            status = (
                AgentCall.Status.CANCELLED
                if isinstance(exc, RunCancelled)
                else AgentCall.Status.FAILED
            )
            if state.stream is not None:
                try:
                    _close_stream(run, call, step, state.stream, status.lower())
                except Exception:  # the run's own failure is what ends it
                    logger.warning("stream of %s not closed", call.public_id, exc_info=True)
            self._finish_call(call, status, "")
            raise
        result_text = "\n\n".join(state.texts)
        self._finish_call(call, AgentCall.Status.COMPLETED, result_text)
        return result_text

    def open_call(self, **fields: Any) -> AgentCall:
        """A new agent call of the run (a sub-agent's), under the fence. The root call is
        opened by the claim itself (``claim_run_with_root``)."""
        with transaction.atomic():
            lock_for_execution(self.run.pk, self.run.execution_epoch)
            return AgentCall.objects.create(run=self.run, **fields)

    def _finish_call(self, call: AgentCall, status: str, text: str) -> None:
        """The call's end, its kept journal entries and agent.completed: all or nothing,
        and nothing once the run was taken over or ended (the append's guard); written
        again after a lost connection unless its agent.completed is found."""
        with suppress(Landed):
            durable(
                f"run {self.run.pk}: agent.completed",
                lambda: self._write_call_end(call, status, text),
                journal=self.journal,
                landed=event_landed(
                    self.run.pk, "agent.completed", {"agentCallId": call.public_id}
                ),
            )

    def _write_call_end(self, call: AgentCall, status: str, text: str) -> None:
        call.status = status
        call.result_text = text
        call.completed_at = timezone.now()
        along: list[tuple[str, list[Any]]] = []
        fence: Any = nullcontext()
        if connection.vendor == "postgresql":
            # The kept journal entries, the call's end and agent.completed: one statement.
            if self.journal.pending:
                along.append(self.journal.insert_statement(IF_APPENDED))
            along.append(_call_ended(call))
        else:
            fence = transaction.atomic()
        with fence:
            if connection.vendor != "postgresql":
                lock_for_execution(self.run.pk, self.run.execution_epoch)
                self.journal.flush()
                call.save(update_fields=["status", "result_text", "completed_at"])
            append_event(
                self.run,
                "agent.completed",
                {
                    "agentCallId": call.public_id,
                    "depth": call.depth,
                    **({"parentAgentCallId": f"call_{call.parent_id}"} if call.parent_id else {}),
                    "agent": call.agent_version.agent.key,
                    "status": status,
                },
                along=along,
                epoch=self.run.execution_epoch,
            )


def _call_ended(call: AgentCall) -> tuple[str, list[Any]]:
    """PostgreSQL: the UPDATE that records how an agent call ended (an ``along`` of its
    agent.completed: only if that event is appended)."""
    names = ("status", "result_text", "completed_at")
    fields = [cast("Field[Any, Any]", AgentCall._meta.get_field(name)) for name in names]
    assignments = ", ".join(f"{connection.ops.quote_name(str(f.column))} = %s" for f in fields)
    values = [f.get_db_prep_save(getattr(call, f.attname), connection) for f in fields]
    sql = f"UPDATE {AgentCall._meta.db_table} SET {assignments} WHERE id = %s AND {IF_APPENDED}"  # noqa: S608
    return sql, [*values, call.pk]


def _preview_feed(stream: TurnStream) -> Callable[[str], None]:
    """The provider's text callback: the live preview of the turn, best effort. A delta
    lost to a dropped connection stops the preview (Publication's block carries the
    text); it never ends the model's turn, which is not repeated."""

    def feed(piece: str) -> None:
        try:
            stream.feed(piece)
        except CONNECTION_ERRORS as exc:
            discard_connection()
            stream.stopped = True
            logger.warning("run %s: live preview stopped (%s)", stream.run.pk, exc)

    return feed


def _close_stream(run: Run, call: AgentCall, step: int, stream: TurnStream, reason: str) -> None:
    """End the turn's preview; its close event is written once, through a lost connection."""
    closed = {"streamId": f"stm_{call.pk}_{step}", "state": "closed"}
    with suppress(Landed):
        durable(
            f"run {run.pk}: stream close",
            lambda: stream.close(reason),
            landed=event_landed(run.pk, "answer.stream", closed),
        )


def _storable_turn(turn: Turn) -> Turn:
    """The turn as far as it is journaled: text, tool names and call IDs made
    storable (model output: characters removed). Arguments are parsed first,
    then made storable by the tool entry."""
    return replace(
        turn,
        text=storable(turn.text),
        tool_calls=[replace(t, id=storable(t.id), name=storable(t.name)) for t in turn.tool_calls],
    )


# -- the run -------------------------------------------------------------------


def execute_run(run_id: str) -> str | None:
    """Execute a queued run to its terminal state. Idempotent: a run that is
    not QUEUED (already taken, finished or cancelled) is left alone.

    Every write of the execution is fenced by the epoch ``claim_run`` took: once the
    run is taken over (a paused worker recovered as WORKER_LOST), the next write is
    refused and the execution stops where it is, writing nothing more. It logs one
    line and raises ``RunFenced`` for the worker (the task is not a success)."""
    claimed = claim_run_with_root(run_id)
    if claimed is None:
        return None
    run, root = claimed
    heartbeats.add(run.pk, run.execution_epoch)
    try:
        return _execute(Engine(run), root)
    except RunFenced as exc:
        logger.warning(
            "run %s: taken over (execution epoch %s, now %s, %s); this execution stops",
            run.pk,
            exc.epoch,
            exc.current,
            exc.status,
        )
        raise
    finally:
        heartbeats.discard(run.pk)


def _execute(engine: "Engine", root: AgentCall) -> str:
    run = engine.run
    epoch = run.execution_epoch

    def end(status: str, reason: str, detail: str = "") -> str:
        # finish_run is idempotent: a run found ended is left as it is.
        return durable(
            f"run {run.pk}: run.{status.lower()}",
            lambda: finish_run(run, status, reason, detail, epoch=epoch),
        )

    try:
        engine.run_call(root)
        data = durable(f"run {run.pk}: verification", lambda: verify_answer(run, root))
        with suppress(Landed):
            durable(
                f"run {run.pk}: citation.verified",
                lambda: append_event(run, "citation.verified", data, epoch=epoch),
                landed=event_landed(run.pk, "citation.verified", {}),
            )
    except RunFenced:
        raise
    except RunEnded:
        return Run.objects.values_list("status", flat=True).get(pk=run.pk)
    except RunCancelled:
        return end(Run.Status.CANCELLED, RunReason.CANCELLED_BY_USER)
    except StepLimitReached as exc:
        return end(_failure_status(run), RunReason.STEP_LIMIT_REACHED, str(exc))
    except ProviderError as exc:
        # reason_detail is for the operator (console), never in an event or the API.
        return end(_failure_status(run), RunReason.PROVIDER_FAILED, storable(str(exc)))
    except SparkTideError as exc:
        return end(_failure_status(run), str(exc.code), storable(exc.detail))
    except CONNECTION_ERRORS as exc:
        if connection.vendor == "postgresql":
            # The database went away inside a step (a search, a commit) that is not
            # written again: not the run's fault. The worker recovers the run itself
            # (WORKER_LOST, runtime/workers.py), its committed blocks kept.
            raise
        logger.exception("run %s failed", run.pk)  # SQLite: a lock, not a lost connection
        return end(_failure_status(run), RunReason.INTERNAL_ERROR, type(exc).__name__)
    except Exception as exc:
        logger.exception("run %s failed", run.pk)
        return end(_failure_status(run), RunReason.INTERNAL_ERROR, type(exc).__name__)
    return end(Run.Status.COMPLETED, "")


def _failure_status(run: Run) -> str:
    # Publication's store, not the runtime, says whether anything was committed.
    return Run.Status.PARTIAL if committed_block_count(run) else Run.Status.FAILED
