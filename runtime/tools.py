"""The tools an agent call may use: the native tool entry and its three tools.

The entry checks identity, argument sealing and the 256 KiB transport cap only —
no content veto: what a tool result may say is each tool's own rule, and what an
answer may say is Publication's. ``Tools`` is mixed into the engine, whose
``run``, ``context`` and ``run_call`` (for sub-agents) the tools use.
"""

import json
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any, cast

from django.utils import timezone

from agents.models import AgentPin
from agents.prompting import CONTEXT_BUDGET, fit_excerpts, tokens_left
from agents.providers import ProviderError
from agents.providers.base import TOOL_NAMES, ToolCall
from agents.versions import is_runnable
from citations.issuance import Issued, issue_citations
from citations.models import CitationReference
from foundation.errors import SparkTideError
from foundation.faults import maybe_fault
from foundation.text_boundary import storable_json
from knowledge.context import TrustedContext
from knowledge.ranking import IndexMissing
from knowledge.remote import RemoteKnowledgeError
from knowledge.retrieval import MAX_TOP_K, Retrieved, retrieve, select_versions
from publication.models import PublicationAttempt
from publication.pipeline import CommitCut, Receipt, publish_candidate, resume_commit
from runs.models import AgentCall, JournalEntry, Run
from runtime.durable import Landed, Unknowable, durable
from runtime.state import CallState, Journal, StepLimitReached
from runtime.tool_errors import REMOTE_TOOL_ERRORS, ToolError

logger = logging.getLogger(__name__)

TRANSPORT_BYTE_CAP = 256 * 1024
# The key a search_knowledge result carries its record under, from the handler to the
# tool entry, which journals it with the receipt and removes it.
_SEARCH_RECORD = "_search"
MAX_CALL_DEPTH = 4


class Tools:
    # Provided by the engine this is mixed into.
    run: Run
    context: TrustedContext
    journal: Journal

    def run_call(self, call: AgentCall) -> str:
        raise NotImplementedError

    def open_call(self, **fields: Any) -> AgentCall:
        raise NotImplementedError

    def tool_entry(
        self, call: AgentCall, state: CallState, step: int, tool_call: ToolCall
    ) -> dict[str, Any]:
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
        # A tool call is on disk before its tool runs (recovery notes it unanswered).
        durable(f"run {self.run.pk}: journal", self.journal.flush, journal=self.journal)
        handler = {
            "search_knowledge": self.search_knowledge,
            "send_answer_part": self.send_answer_part,
            "call_agent": self.call_agent,
        }[tool_call.name]
        result = handler(call, state, step, args)
        # The search's record goes to the journal with its receipt, never to the model.
        search = result.pop(_SEARCH_RECORD, None)
        extra = {"search": search} if search is not None else {}
        self._journal_tool(
            call, step, tool_call, JournalEntry.Kind.TOOL_RECEIPT, receipt=_brief(result), **extra
        )
        return result

    def _journal_tool(
        self, call: AgentCall, step: int, tool_call: ToolCall, kind: str, **data: Any
    ) -> None:
        self.journal.add(
            call, kind, tool=tool_call.name, step=step, toolCallId=tool_call.id, **data
        )

    def _tool_error(
        self, call: AgentCall, step: int, tool_call: ToolCall, error: ToolError
    ) -> dict[str, Any]:
        self._journal_tool(
            call, step, tool_call, JournalEntry.Kind.TOOL_RECEIPT, receipt={"error": str(error)}
        )
        return error.result()

    def search_knowledge(
        self, call: AgentCall, state: CallState, step: int, args: dict[str, Any]
    ) -> dict[str, Any]:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolError.INVALID_ARGUMENTS.result("query must be non-empty text")
        try:
            top_k = max(1, min(MAX_TOP_K, int(args.get("top_k") or 3)))
        except (TypeError, ValueError, OverflowError):
            return ToolError.INVALID_ARGUMENTS.result("top_k must be an integer")
        began = timezone.now()
        try:
            # Reads, then one transaction: a search cut anywhere is searched again, unless
            # its issuance may have landed (``_no_citations_since``).
            items, issued, omitted = durable(
                f"run {self.run.pk}: search",
                lambda: self._search(call, state, query, top_k),
                landed=_no_citations_since(call, began),
            )
        except RemoteKnowledgeError as exc:
            # The exception names the endpoint; the model gets the code only.
            logger.warning("run %s: search_knowledge: %s", self.run.pk, exc)
            return REMOTE_TOOL_ERRORS.get(exc.code, ToolError.KNOWLEDGE_SOURCE_ERROR).result()
        except IndexMissing as exc:
            logger.warning("run %s: search_knowledge: %s", self.run.pk, exc)
            return ToolError.KNOWLEDGE_INDEX_MISSING.result()
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
        answer: dict[str, Any] = {"results": results, _SEARCH_RECORD: _search_record(items, issued)}
        if omitted:
            answer["omitted"] = {"count": omitted, "reason": CONTEXT_BUDGET}
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

    def _search(
        self, call: AgentCall, state: CallState, query: str, top_k: int
    ) -> tuple[Any, Issued, int]:
        """Retrieve, fit the excerpts to the context budget, issue their citations: the
        items, what was issued, and how many items the budget left out."""
        versions = select_versions(call.agent_version, query)
        items = retrieve(
            versions=versions,
            query=query,
            top_k=top_k,
            owner=self.run.owner,
            app=self.run.app,
            context=self.context,
        )
        # Under the version's context budget the excerpts go whole, best first; what does not
        # fit is left out before issuance and said so (agents/prompting.py).
        left = tokens_left(
            call.agent_version.model, state.instructions, state.history, state.messages
        )
        shown = fit_excerpts([(item.title, item.content) for item in items], left)
        omitted = len(items) - shown
        if omitted:
            trace = {**getattr(items, "trace", {}), "omitted": omitted}
            items = Retrieved(items[:shown], getattr(items, "refused", ()), trace)
        issued = issue_citations(
            run=self.run, agent_call=call, items=items, query=query, top_k=top_k
        )
        return items, issued, omitted

    def _open_sub_agent(self, call: AgentCall, key: str, task: str) -> AgentCall | ToolError:
        """The sub-agent ``key`` opened as a child of ``call`` (reads, then one short
        transaction), or the tool error that refuses it."""
        allowed = call.agent_version.sub_agents.filter(key=key).first()
        if allowed is None or call.depth + 1 > MAX_CALL_DEPTH:
            return ToolError.AGENT_NOT_ALLOWED
        pin = (
            AgentPin.objects.filter(app=self.run.app, agent=allowed)
            .select_related("version__agent")
            .first()
        )
        # The rule a root run's version meets (agents/versions.py): a pin naming a
        # retired version does not run as a sub-agent either.
        if pin is None or not is_runnable(
            pin.version, agent_id=allowed.pk, tenant_id=self.run.tenant_id
        ):
            return ToolError.AGENT_NOT_AVAILABLE
        return self.open_call(
            parent=call, depth=call.depth + 1, agent_version=pin.version, task=task
        )

    def send_answer_part(
        self, call: AgentCall, state: CallState, step: int, args: dict[str, Any]
    ) -> dict[str, Any]:
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
        self,
        call: AgentCall,
        step: int,
        *,
        entry: str,
        body: str | dict[str, Any],
        replaces: str | None = None,
    ) -> dict[str, Any]:
        run = self.run
        # the journal as it was, before Publication acts
        durable(f"run {run.pk}: journal", self.journal.flush, journal=self.journal)
        began = timezone.now()
        cut: list[CommitCut] = []  # the commit whose connection was lost, to finish

        def offer() -> Receipt:
            try:
                if cut:
                    return resume_commit(cut.pop())
                return publish_candidate(
                    run=run,
                    agent_call=call,
                    entry=entry,
                    body=body,
                    replaces=replaces,
                    resumable=True,
                )
            except CommitCut as again:
                cut.append(again)
                raise

        receipt = durable(
            f"run {run.pk}: publication",
            offer,
            # A cut commit is Publication's to finish; before it, nothing may have landed.
            landed=lambda: not cut and _no_attempt_since(call, began)(),
        )
        # Fault points for recovery tests: the commit happened; the journal
        # may not know it. Publication's store stays the truth.
        maybe_fault("after_publication_commit")
        self.journal.add(
            call, JournalEntry.Kind.NOTE, tool="publication", step=step, receipt=receipt.as_dict()
        )
        durable(f"run {run.pk}: journal", self.journal.flush, journal=self.journal)
        maybe_fault("after_journal_write")
        return {"receipt": receipt.as_dict()}

    def call_agent(
        self, call: AgentCall, state: CallState, step: int, args: dict[str, Any]
    ) -> dict[str, Any]:
        key, task = args.get("agent"), args.get("task")
        if not isinstance(key, str) or not isinstance(task, str):
            return ToolError.INVALID_ARGUMENTS.result("agent and task must be text")
        began = timezone.now()
        try:
            opened = durable(
                f"run {self.run.pk}: sub-agent",
                lambda: self._open_sub_agent(call, key, task),
                landed=lambda: AgentCall.objects.filter(
                    parent=call, started_at__gte=began
                ).exists(),
            )
        except Landed:  # opened, its answer lost: the row is the call
            opened = durable(
                f"run {self.run.pk}: sub-agent",
                lambda: AgentCall.objects.get(parent=call, started_at__gte=began),
            )
        if isinstance(opened, ToolError):
            return opened.result()
        child = opened
        try:
            text = self.run_call(child)
        except (ProviderError, StepLimitReached, SparkTideError) as exc:
            # The child ended FAILED with its agent.completed; its cause (which
            # may name a host or a URL) is for the log, the parent gets a code.
            logger.warning("run %s: sub-agent %s failed: %s", self.run.pk, child.public_id, exc)
            return ToolError.SUB_AGENT_FAILED.result()
        return {"agentCallId": child.public_id, "text": text}


def _brief(result: dict[str, Any]) -> dict[str, Any]:
    if "receipt" in result:
        return cast(dict[str, Any], result["receipt"])
    if "results" in result:
        brief: dict[str, Any] = {"citations": [r["id"] for r in result["results"]]}
        if "itemErrors" in result:
            brief["itemErrors"] = [error["code"] for error in result["itemErrors"]]
        if "omitted" in result:
            brief["omitted"] = result["omitted"]["count"]
        return brief
    if "error" in result:
        return {"error": result["error"]["code"]}
    return {"agentCallId": result.get("agentCallId")}


def _search_record(items: Any, issued: Any) -> dict[str, Any]:
    """What one search looked for, found and left out (counts only), for the run's
    owner (``api.selectors.run_searches``)."""
    record = dict(getattr(items, "trace", {}))
    record["hits"] = [
        {
            "rank": rank,
            "score": round(item.score, 6),
            "document": item.source_ref.get("id"),
            "page": item.source_ref.get("page"),
            "citationId": ref.pk,
        }
        for rank, (ref, item) in enumerate(zip(issued.references, items, strict=False), 1)
    ]
    return record


def _no_citations_since(call: AgentCall, began: datetime) -> Callable[[], bool]:
    """The landed check of a search: its reads write nothing and its issuance is one
    transaction, so no citation of the call since ``began`` means it is searched again.
    One found means the issuance committed and only its answer was lost: ``Unknowable``
    (the run ends WORKER_LOST), never issued twice."""

    def check() -> bool:
        if CitationReference.objects.filter(agent_call=call, created_at__gte=began).exists():
            raise Unknowable(f"search of {call.public_id}: citations were issued")
        return False

    return check


def _no_attempt_since(call: AgentCall, began: datetime) -> Callable[[], bool]:
    """The landed check of a Publication candidate whose connection was lost outside the
    commit Publication reads back itself: no attempt of the call since ``began`` means
    nothing of it was written, and it is offered again; an attempt means its outcome is
    the pipeline's to tell, not ours to guess: ``Unknowable`` (the run ends WORKER_LOST,
    its committed blocks kept)."""

    def check() -> bool:
        if PublicationAttempt.objects.filter(agent_call=call, created_at__gte=began).exists():
            raise Unknowable(f"candidate of {call.public_id}: an attempt was written")
        return False

    return check
