"""The run engine: drives agent calls, their tools, and Publication.

One agent call: ask the provider for the next turn → its plain text becomes a
Publication candidate (entry A) → its tool calls run → repeat until the provider
is done, the step limit is hit, the run is cancelled, or the provider fails.

The runtime records how the run ended; it never decides whether a committed
block exists — Publication's store does (PARTIAL = failed after ≥ 1 block).
"""

import json
import logging
import threading
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from citations.evidence import evidence_handles, evidence_view
from citations.issuance import issue_citations
from publication.models import AnswerBlock
from publication.pipeline import publish_candidate
from publication.verification import verify_answer
from runs.events import RunEnded, append_event
from runs.lifecycle import claim_run, finish_run
from runs.models import AgentCall, JournalEntry, Run
from runs.reasons import RunReason
from runs.runtime.conversation import conversation_history
from runs.runtime.tool_errors import REMOTE_TOOL_ERRORS, ToolError
from sparktide.agents.models import AgentPin
from sparktide.agents.providers import ProviderError, get_provider
from sparktide.agents.providers.base import TOOL_NAMES, ToolCall, Turn
from sparktide.errors import SparkTideError
from sparktide.faults import maybe_fault
from sparktide.knowledge.context import TrustedContext
from sparktide.knowledge.remote import RemoteKnowledgeError
from sparktide.knowledge.retrieval import retrieve, select_versions
from sparktide.text_boundary import storable, storable_json

logger = logging.getLogger(__name__)

TRANSPORT_BYTE_CAP = 256 * 1024
MAX_TOP_K = 20
MAX_CALL_DEPTH = 4


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
    messages: list[dict] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    # Earlier turns of the run's conversation (runs/runtime/conversation.py); root call only.
    history: list[dict] = field(default_factory=list)

    def evidence_ids(self) -> list[str]:
        return [ref.pk for ref in evidence_view(self.call)]

    def publication_ids(self) -> list[str]:
        return list(
            AnswerBlock.objects.filter(run=self.run)
            .order_by("delivery_ordinal")
            .values_list("pk", flat=True)
        )

    def numeric_handles(self) -> list[str]:
        return [h.pk for h in evidence_handles(self.call)]

    def search_results(self) -> list[dict]:
        return self.results


def _journal(
    run: Run, call: AgentCall | None, kind: str, *, tool: str = "", step: int = 0, **data
) -> None:
    JournalEntry.objects.create(
        run=run, agent_call=call, kind=kind, tool=tool, step=step, data=data
    )


def _heartbeat(run: Run) -> None:
    """Record liveness and read the cancel flag: one round trip on the usual path."""
    alive = Run.objects.filter(
        pk=run.pk, status=Run.Status.RUNNING, cancel_requested_at__isnull=True
    )
    if alive.update(heartbeat_at=timezone.now()) == 1:
        return
    if Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).exists():
        raise RunCancelled
    raise RunEnded


class HeartbeatThread(threading.Thread):
    """Beats every SPARKTIDE_HEARTBEAT_SECONDS while the run executes, so a slow
    model call (minutes) is not mistaken for a dead worker by recovery. Stops
    with the run. Holds a database connection only for the beat itself, and a
    beat lost to a database error is retried at the next one."""

    def __init__(self, run_id: str) -> None:
        super().__init__(name=f"heartbeat-{run_id}", daemon=True)
        self.run_id = run_id
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(settings.SPARKTIDE_HEARTBEAT_SECONDS):
            try:
                Run.objects.filter(pk=self.run_id, status=Run.Status.RUNNING).update(
                    heartbeat_at=timezone.now()
                )
            except DatabaseError as exc:
                logger.warning("heartbeat of %s missed: %s", self.run_id, exc)
            finally:
                connection.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=5)


class Engine:
    def __init__(self, run: Run) -> None:
        self.run = run
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
                _heartbeat(run)
                turn = _storable_turn(provider.next_turn(state))
                _journal(
                    run,
                    call,
                    JournalEntry.Kind.STEP,
                    step=step,
                    text=turn.text,
                    toolCalls=[t.name for t in turn.tool_calls],
                )
                if turn.text.strip():
                    state.texts.append(turn.text)
                    if call.depth == 0:
                        self._publish(call, step, entry="A", body=turn.text)
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
            self._finish_call(call, status, "")
            raise
        result_text = "\n\n".join(state.texts)
        self._finish_call(call, AgentCall.Status.COMPLETED, result_text)
        return result_text

    def _finish_call(self, call: AgentCall, status: str, text: str) -> None:
        call.status = status
        call.result_text = text
        call.completed_at = timezone.now()
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
        )

    # -- tools -----------------------------------------------------------------

    def tool_entry(self, call: AgentCall, state: CallState, step: int, tool_call: ToolCall) -> dict:
        """The native tool entry: identity, argument sealing, transport cap. No content veto."""
        if tool_call.name not in TOOL_NAMES:
            return self._tool_error(call, step, tool_call, ToolError.UNKNOWN_TOOL)
        if len(tool_call.arguments.encode("utf-8", "surrogatepass")) > TRANSPORT_BYTE_CAP:
            return self._tool_error(call, step, tool_call, ToolError.ARGUMENTS_TOO_LARGE)
        try:
            args = json.loads(tool_call.arguments or "{}")
        except (ValueError, RecursionError):
            args = None
        if not isinstance(args, dict):
            return self._tool_error(call, step, tool_call, ToolError.ARGUMENTS_NOT_SEALED)
        # Model output crosses the storage boundary here: a NUL or lone surrogate
        # in a query, a task or a body is removed, never a DataError mid-run.
        args = storable_json(args)
        self._journal_tool(call, step, tool_call, JournalEntry.Kind.TOOL_CALL, arguments=args)
        handler = {
            "search_knowledge": self.search_knowledge,
            "send_answer_part": self.send_answer_part,
            "call_agent": self.call_agent,
        }[tool_call.name]
        result = handler(call, state, step, args)
        self._journal_tool(
            call, step, tool_call, JournalEntry.Kind.TOOL_RECEIPT, receipt=_brief(result)
        )
        return result

    def _journal_tool(self, call, step: int, tool_call: ToolCall, kind: str, **data) -> None:
        _journal(
            self.run, call, kind, tool=tool_call.name, step=step, toolCallId=tool_call.id, **data
        )

    def _tool_error(self, call, step, tool_call, error: ToolError) -> dict:
        self._journal_tool(
            call, step, tool_call, JournalEntry.Kind.TOOL_RECEIPT, receipt={"error": str(error)}
        )
        return error.result()

    def search_knowledge(self, call: AgentCall, state: CallState, step: int, args: dict) -> dict:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolError.INVALID_ARGUMENTS.result("query must be non-empty text")
        try:
            top_k = max(1, min(MAX_TOP_K, int(args.get("top_k") or 3)))
        except (TypeError, ValueError, OverflowError):
            return ToolError.INVALID_ARGUMENTS.result("top_k must be an integer")
        versions = select_versions(call.agent_version, query)
        try:
            items = retrieve(
                versions=versions,
                query=query,
                top_k=top_k,
                owner=self.run.owner,
                app=self.run.app,
                context=self.context,
            )
        except RemoteKnowledgeError as exc:
            # The exception names the endpoint; the model gets the code only.
            logger.warning("run %s: search_knowledge: %s", self.run.pk, exc)
            return REMOTE_TOOL_ERRORS.get(exc.code, ToolError.KNOWLEDGE_SOURCE_ERROR).result()
        issued = issue_citations(
            run=self.run, agent_call=call, items=items, query=query, top_k=top_k
        )
        handles_by_ref = {
            ref: [
                {
                    "id": handle.pk,
                    "key": handle.fact.key,
                    "label": handle.fact.label or handle.fact.key,
                    "display": handle.fact.display(),
                    "asOf": handle.fact.as_of.isoformat() if handle.fact.as_of else None,
                }
                for handle in handles
            ]
            for ref, handles in issued.handles_by_citation().items()
        }
        results = [
            {
                "id": ref.pk,
                "title": ref.title,
                "content": item.content,
                "sourceRef": ref.source_ref,
                "handles": handles_by_ref.get(ref.pk, []),
            }
            for ref, item in zip(issued.references, items, strict=False)
        ]
        state.results.extend(results)
        answer: dict = {"results": results}
        if issued.refused:
            answer["refused"] = {
                "code": str(ToolError.CITATION_LIMIT_EXCEEDED),
                "count": issued.refused,
            }
        refused_items = getattr(items, "refused", ())
        if refused_items:
            # Each REMOTE item the storage boundary refused is a coded error of
            # its own; the other items and the run go on (docs/errors.md).
            answer["itemErrors"] = [
                ToolError.SOURCE_ITEM_UNSTORABLE.result()["error"] for _ in refused_items
            ]
        return answer

    def send_answer_part(self, call: AgentCall, state: CallState, step: int, args: dict) -> dict:
        markdown = args.get("markdown")
        if not isinstance(markdown, str | dict):
            return ToolError.INVALID_ARGUMENTS.result("markdown must be text")
        if call.depth > 0:
            # Sub-agents answer their caller; only the root agent publishes.
            state.texts.append(
                markdown if isinstance(markdown, str) else json.dumps(markdown, ensure_ascii=False)
            )
            return {"accepted": "returned to caller"}
        # Any replaces the model sent goes to Publication as it is: an invalid
        # target is a failed modification there, never silently a new block.
        replaces = args.get("replaces")
        if replaces is not None and not isinstance(replaces, str):
            replaces = json.dumps(replaces, ensure_ascii=False)
        return self._publish(call, step, entry="B", body=markdown, replaces=replaces)

    def _publish(
        self, call: AgentCall, step: int, *, entry: str, body, replaces: str | None = None
    ) -> dict:
        receipt = publish_candidate(
            run=self.run, agent_call=call, entry=entry, body=body, replaces=replaces
        )
        # Fault points for recovery tests: the commit happened; the journal
        # may not know it. Publication's store stays the truth.
        maybe_fault("after_publication_commit")
        _journal(
            self.run,
            call,
            JournalEntry.Kind.NOTE,
            tool="publication",
            step=step,
            receipt=receipt.as_dict(),
        )
        maybe_fault("after_journal_write")
        return {"receipt": receipt.as_dict()}

    def call_agent(self, call: AgentCall, state: CallState, step: int, args: dict) -> dict:
        key, task = args.get("agent"), args.get("task")
        if not isinstance(key, str) or not isinstance(task, str):
            return ToolError.INVALID_ARGUMENTS.result("agent and task must be text")
        allowed = call.agent_version.sub_agents.filter(key=key).first()
        if allowed is None or call.depth + 1 > MAX_CALL_DEPTH:
            return ToolError.AGENT_NOT_ALLOWED.result()
        pin = (
            AgentPin.objects.filter(app=self.run.app, agent=allowed)
            .select_related("version__agent")
            .first()
        )
        if pin is None:
            return ToolError.AGENT_NOT_AVAILABLE.result()
        child = AgentCall.objects.create(
            run=self.run, parent=call, depth=call.depth + 1, agent_version=pin.version, task=task
        )
        try:
            text = self.run_call(child)
        except (ProviderError, StepLimitReached, SparkTideError) as exc:
            # The child ended FAILED with its agent.completed; its cause (which
            # may name a host or a URL) is for the log, the parent gets a code.
            logger.warning("run %s: sub-agent %s failed: %s", self.run.pk, child.public_id, exc)
            return ToolError.SUB_AGENT_FAILED.result()
        return {"agentCallId": child.public_id, "text": text}


def _storable_turn(turn: Turn) -> Turn:
    """The turn as far as it is journaled: text, tool names and call IDs made
    storable (model output: characters removed). Arguments are parsed first,
    then made storable by the tool entry."""
    return replace(
        turn,
        text=storable(turn.text),
        tool_calls=[replace(t, id=storable(t.id), name=storable(t.name)) for t in turn.tool_calls],
    )


def _brief(result: dict) -> dict:
    if "receipt" in result:
        return result["receipt"]
    if "results" in result:
        brief: dict = {"citations": [r["id"] for r in result["results"]]}
        if "itemErrors" in result:
            brief["itemErrors"] = [error["code"] for error in result["itemErrors"]]
        return brief
    if "error" in result:
        return {"error": result["error"]["code"]}
    return {"agentCallId": result.get("agentCallId")}


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
    heartbeat = HeartbeatThread(run.pk)
    heartbeat.start()
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
        heartbeat.stop()
    return finish_run(run, Run.Status.COMPLETED, "")


def _failure_status(run: Run) -> str:
    # Publication's store, not the runtime, says whether anything was committed.
    return Run.Status.PARTIAL if AnswerBlock.objects.filter(run=run).exists() else Run.Status.FAILED
