"""The evidence view of an agent call and the owner's current right to a source."""

from collections.abc import Iterable, Mapping
from typing import Any

from django.utils import timezone

from citations.models import CitationReference, NumericHandle
from runs.models import AgentCall, Run
from sparktide.knowledge.models import (
    Document,
    KnowledgeVersion,
    capability_refusals,
    user_may_read_document,
)


def evidence_call_ids(agent_call: AgentCall) -> list[int]:
    """This call and its authorized sub-calls (transitively).

    A sub-call is authorized when the engine admitted it (its agent was allowed)
    and it completed, so its result flowed back to the caller. A failed or
    cancelled sub-call's retrievals never become the caller's evidence.
    """
    calls = list(
        AgentCall.objects.filter(run_id=agent_call.run_id).values("id", "parent_id", "status")
    )
    children: dict[int | None, list[Mapping[str, Any]]] = {}
    for call in calls:
        children.setdefault(call["parent_id"], []).append(call)
    ids = [agent_call.pk]
    stack = [agent_call.pk]
    while stack:
        for child in children.get(stack.pop(), []):
            if child["status"] == AgentCall.Status.COMPLETED:
                ids.append(child["id"])
                stack.append(child["id"])
    return ids


def evidence_view(agent_call: AgentCall) -> list[CitationReference]:
    """References in this call's evidence view: its own first, then sub-calls', each in issuance order."""
    ids = evidence_call_ids(agent_call)
    refs = list(CitationReference.objects.filter(agent_call_id__in=ids).order_by("ordinal"))
    own = [r for r in refs if r.agent_call_id == agent_call.pk]
    return own + [r for r in refs if r.agent_call_id != agent_call.pk]


def evidence_handles(agent_call: AgentCall) -> list[NumericHandle]:
    ids = evidence_call_ids(agent_call)
    return list(
        NumericHandle.objects.filter(agent_call_id__in=ids)
        .select_related("fact")
        .order_by("ordinal")
    )


class SourceAccess:
    """Answers "may the run's owner use this reference now?" with per-request caching.

    Checks: the app may use the exact knowledge version now (``capability_refusals``:
    PUBLISHED, a current lease, the app's tenant), and (for documents) the owner
    may read the document now.
    """

    def __init__(self, run: Run) -> None:
        self.run = run
        self.now = timezone.now()
        self._versions: dict[int, bool] = {}
        self._documents: dict[int, bool] = {}

    def prefetch_versions(self, versions: Iterable[KnowledgeVersion]) -> None:
        """Decide many versions with one query (the capability rule of knowledge)."""
        pending = [v.pk for v in versions if v.pk not in self._versions]
        if not pending:
            return
        for pk, refusal in capability_refusals(self.run.app, pending, self.now).items():
            self._versions[pk] = refusal is None

    def version_ok(self, version: KnowledgeVersion) -> bool:
        if version.pk not in self._versions:
            self.prefetch_versions([version])
        return self._versions[version.pk]

    def prefetch_documents(self, documents: Iterable[Document | None]) -> None:
        """Decide many documents in a bounded number of queries (no N+1)."""
        pending = [d for d in documents if d is not None and d.pk not in self._documents]
        restricted = [d for d in pending if d.restricted]
        if restricted:
            from guardian.core import ObjectPermissionChecker

            checker = ObjectPermissionChecker(self.run.owner)
            # guardian annotates a QuerySet; its docstring and code take any list of objects.
            checker.prefetch_perms(restricted)  # type: ignore[arg-type]
            self._checker = checker
        for document in pending:
            self._documents[document.pk] = user_may_read_document(
                self.run.owner, document, checker=getattr(self, "_checker", None)
            )

    def document_ok(self, document: Document) -> bool:
        if document.pk not in self._documents:
            self.prefetch_documents([document])
        return self._documents[document.pk]

    def reference_ok(self, ref: CitationReference) -> bool:
        if not self.version_ok(ref.version):
            return False
        if ref.document is None:
            return True
        return self.document_ok(ref.document)
