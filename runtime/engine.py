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
from dataclasses import replace
from typing import Any, cast

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Field
from django.utils import timezone

from agents.providers import ProviderError, get_provider
from agents.providers.base import Turn
from foundation.errors import SparkTideError
from foundation.text_boundary import storable
from knowledge.context import TrustedContext
from publication.models import AnswerBlock
from publication.verification import verify_answer
from runs.events import RunEnded, append_event
from runs.lifecycle import claim_run, finish_run
from runs.models import AgentCall, JournalEntry, Run
from runs.reasons import RunReason
from runtime.conversation import conversation_history
from runtime.state import CallState, Journal, RunCancelled, StepLimitReached
from runtime.streaming import TurnStream, close_reason
from runtime.tools import Tools

logger = logging.getLogger(__name__)


def _heartbeat(run: Run, journal: Journal | None = None) -> None:
    """Record liveness and read the cancel flag: one round trip on the usual path.

    On PostgreSQL the journal entries kept since the last side effect are written by
    the same statement (a data-modifying WITH runs whatever the UPDATE finds)."""
    if connection.vendor == "postgresql":
        insert, params = journal.insert_statement() if journal and journal.pending else ("", [])
        prefix = f"WITH journaled AS ({insert}) " if insert else ""
        beat = (
            f"{prefix}UPDATE {Run._meta.db_table} SET heartbeat_at = %s"  # noqa: S608
            " WHERE id = %s AND status = %s AND cancel_requested_at IS NULL"
        )
        with connection.cursor() as cursor:
            cursor.execute(beat, [*params, timezone.now(), run.pk, Run.Status.RUNNING])
            beaten = cursor.rowcount
    else:
        if journal is not None:
            journal.flush()
        alive = Run.objects.filter(
            pk=run.pk, status=Run.Status.RUNNING, cancel_requested_at__isnull=True
        )
        beaten = alive.update(heartbeat_at=timezone.now())
    if beaten == 1:
        return
    if Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).exists():
        raise RunCancelled
    raise RunEnded


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
        self.runs: set[str] = set()
        self.thread: threading.Thread | None = None
        self.stopped = threading.Event()

    def add(self, run_id: str) -> None:
        with self.lock:
            self.runs.add(run_id)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(
                    target=self._beat_forever, name="sparktide-run-heartbeats", daemon=True
                )
                self.thread.start()

    def discard(self, run_id: str) -> None:
        with self.lock:
            self.runs.discard(run_id)

    def _beat_forever(self) -> None:
        while not self.stopped.wait(settings.SPARKTIDE_HEARTBEAT_SECONDS):
            self.beat()

    def stop(self) -> None:
        """End the thread (tests; a process's own instance lives as long as it)."""
        self.stopped.set()
        if self.thread is not None:
            self.thread.join(timeout=5)

    def beat(self) -> int:
        """One beat of every run in flight (one statement); how many rows it touched."""
        with self.lock:
            run_ids = list(self.runs)
        if not run_ids:
            return 0
        try:
            return Run.objects.filter(pk__in=run_ids, status=Run.Status.RUNNING).update(
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
        append_event(
            run,
            "agent.started",
            {
                "agentCallId": call.public_id,
                "depth": call.depth,
                **({"parentAgentCallId": f"call_{call.parent_id}"} if call.parent_id else {}),
                "agent": version.agent.key,
                "agentVersion": version.version,
            },
        )
        state = CallState(run=run, call=call, instructions=version.instructions, task=call.task)
        if call.depth == 0:
            state.history = conversation_history(run)
        state.messages.append({"role": "user", "content": call.task})
        try:
            # Inside the try: a config the provider refuses (stored before a rule
            # tightened) ends this call FAILED with its agent.completed.
            provider = get_provider(version.model)
            for step in range(1, version.max_steps + 1):
                _heartbeat(run, self.journal)
                _release_connection()
                if call.depth == 0:
                    state.stream = TurnStream(run, call, step)
                    state.on_text = state.stream.feed
                turn = _storable_turn(provider.next_turn(state))
                if state.stream is not None:
                    # What the coalescing interval still holds goes out before Publication
                    # starts: readers have the whole turn before its block, and the last
                    # delta does not race the stream's close event.
                    state.stream.flush()
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
                    state.stream.close(close_reason(published and published["receipt"]))
                    state.stream = state.on_text = None
                message: dict = {"role": "assistant", "content": turn.text or None}
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
                    state.stream.close(status.lower())
                except Exception:  # the run's own failure is what ends it
                    logger.warning("stream of %s not closed", call.public_id, exc_info=True)
            self._finish_call(call, status, "")
            raise
        result_text = "\n\n".join(state.texts)
        self._finish_call(call, AgentCall.Status.COMPLETED, result_text)
        return result_text

    def _finish_call(self, call: AgentCall, status: str, text: str) -> None:
        call.status = status
        call.result_text = text
        call.completed_at = timezone.now()
        along: list[tuple[str, list]] = []
        if connection.vendor == "postgresql":
            # The kept journal entries, the call's end and agent.completed: one statement.
            if self.journal.pending:
                along.append(self.journal.insert_statement())
            along.append(_call_ended(call))
        else:
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
        )


def _call_ended(call: AgentCall) -> tuple[str, list]:
    """PostgreSQL: the UPDATE that records how an agent call ended."""
    names = ("status", "result_text", "completed_at")
    fields = [cast("Field[Any, Any]", AgentCall._meta.get_field(name)) for name in names]
    assignments = ", ".join(f"{connection.ops.quote_name(str(f.column))} = %s" for f in fields)
    values = [f.get_db_prep_save(getattr(call, f.attname), connection) for f in fields]
    sql = f"UPDATE {AgentCall._meta.db_table} SET {assignments} WHERE id = %s"  # noqa: S608
    return sql, [*values, call.pk]


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
    not QUEUED (already taken, finished or cancelled) is left alone."""
    run = claim_run(run_id)
    if run is None:
        return None
    engine = Engine(run)
    root = AgentCall.objects.create(
        run=run, depth=0, agent_version=run.agent_version, task=run.input
    )
    heartbeats.add(run.pk)
    try:
        engine.run_call(root)
        data = verify_answer(run, root)
        append_event(run, "citation.verified", data)
    except RunEnded:
        return Run.objects.values_list("status", flat=True).get(pk=run.pk)
    except RunCancelled:
        return finish_run(run, Run.Status.CANCELLED, RunReason.CANCELLED_BY_USER)
    except StepLimitReached as exc:
        return finish_run(run, _failure_status(run), RunReason.STEP_LIMIT_REACHED, str(exc))
    except ProviderError as exc:
        # reason_detail is for the operator (console), never in an event or the API.
        return finish_run(run, _failure_status(run), RunReason.PROVIDER_FAILED, storable(str(exc)))
    except SparkTideError as exc:
        return finish_run(run, _failure_status(run), str(exc.code), storable(exc.detail))
    except Exception as exc:
        logger.exception("run %s failed", run.pk)
        return finish_run(run, _failure_status(run), RunReason.INTERNAL_ERROR, type(exc).__name__)
    finally:
        heartbeats.discard(run.pk)
    return finish_run(run, Run.Status.COMPLETED, "")


def _failure_status(run: Run) -> str:
    # Publication's store, not the runtime, says whether anything was committed.
    return Run.Status.PARTIAL if AnswerBlock.objects.filter(run=run).exists() else Run.Status.FAILED
