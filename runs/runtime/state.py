"""What one agent call carries between the engine, its provider and its tools."""

from dataclasses import dataclass, field

from citations.evidence import evidence_handles, evidence_view
from publication.models import AnswerBlock
from runs.models import AgentCall, JournalEntry, Run


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


def journal(
    run: Run, call: AgentCall | None, kind: str, *, tool: str = "", step: int = 0, **data
) -> None:
    JournalEntry.objects.create(
        run=run, agent_call=call, kind=kind, tool=tool, step=step, data=data
    )
