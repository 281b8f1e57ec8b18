"""The evidence view of an agent call and the owner's current right to a source."""

from collections.abc import Iterable
from datetime import datetime
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import BooleanField, Exists, OuterRef, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from citations.models import CitationReference, NumericHandle
from foundation.compiled import (
    PLACEHOLDER_INT,
    PLACEHOLDER_TIME,
    placeholder_text,
    prepared_once,
)
from knowledge.models import (
    CapabilityRefusal,
    Document,
    Knowledge,
    KnowledgeVersion,
    app_lease_current,
    capability_refusals,
    refusal_of,
    user_may_read_document,
)
from runs.models import AgentCall, Run
from tenancy.models import App


def _evidence_sql(agent_call: AgentCall) -> tuple[str, list[Any]]:
    """The ids of the evidence view as one SQL query (a recursive CTE), so it can be
    run alone or read inside the statement that looks the references up."""
    table = connection.ops.quote_name(AgentCall._meta.db_table)
    # Only the model's own quoted table name is formatted in; every value is a parameter.
    sql = (
        f"WITH RECURSIVE evidence(id) AS (SELECT c.id FROM {table} c WHERE c.id = %s UNION "  # noqa: S608
        f"SELECT c.id FROM {table} c JOIN evidence e ON c.parent_id = e.id "
        "WHERE c.run_id = %s AND c.status = %s) SELECT id FROM evidence"
    )
    return sql, [agent_call.pk, agent_call.run_id, str(AgentCall.Status.COMPLETED)]


def evidence_call_ids(agent_call: AgentCall) -> list[int]:
    """This call and its authorized sub-calls (transitively).

    A sub-call is authorized when the engine admitted it (its agent was allowed)
    and it completed, so its result flowed back to the caller. A failed or
    cancelled sub-call's retrievals never become the caller's evidence.
    """
    sql, params = _evidence_sql(agent_call)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def in_evidence_view(agent_call: AgentCall, field: str = "agent_call_id") -> RawSQL:
    """An annotation: is the row's ``field`` (an agent call id of the same table) in
    ``agent_call``'s evidence view? The rule of ``evidence_call_ids``, read in the
    query of the rows themselves (one round trip instead of two)."""
    sql, params = _evidence_sql(agent_call)
    column = connection.ops.quote_name(field)
    return RawSQL(f"{column} IN ({sql})", params, output_field=BooleanField())  # noqa: S611


def evidence_view(agent_call: AgentCall) -> list[CitationReference]:
    """References in this call's evidence view: its own first, then sub-calls', each in issuance order."""
    ids = evidence_call_ids(agent_call)
    refs = list(CitationReference.objects.filter(agent_call_id__in=ids).order_by("ordinal"))
    own = [r for r in refs if r.agent_call_id == agent_call.pk]
    return own + [r for r in refs if r.agent_call_id != agent_call.pk]


def evidence_handles(agent_call: AgentCall) -> list[NumericHandle]:
    ids = evidence_call_ids(agent_call)
    return list(NumericHandle.objects.filter(agent_call_id__in=ids).order_by("ordinal"))


def lease_of_version(app_id: int, now: datetime) -> Exists:
    """Knowledge's ``app_lease_current`` of the app on a reference's version, as the
    ``app_lease_current`` annotation of a reference query (``SourceAccess.refusal``)."""
    return app_lease_current(App(pk=app_id), OuterRef("version_id"), now)


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

    def proof_references(
        self, ids: list[str], agent_call: AgentCall
    ) -> "dict[str, ProofReference]":
        """The references of ``ids`` for the source proof of ``agent_call``, in one
        statement: each with its version (status, knowledge tenant), its document
        (ACL fields; never its text), the capability (``app_lease_current``) and
        whether it is in the call's evidence view (``in_view``). Decided with
        ``learn``. The statement is compiled once per process and prepared once per
        connection (foundation/compiled.py); its rows are read as ``ProofReference``
        rows that carry only these fields."""
        compiled = prepared_once(
            "proof_references",
            _proof_query,
            {
                "ids": [placeholder_text("ids")],
                "app_id": PLACEHOLDER_INT,
                "now": PLACEHOLDER_TIME,
                "call_id": PLACEHOLDER_INT - 1,
                "run_id": placeholder_text("run"),
            },
        )
        if compiled is None:  # the ORM changed a placeholder: the QuerySet as written
            query = _proof_query(
                ids=ids,
                app_id=self.run.app.pk,
                now=self.now,
                call_id=agent_call.pk,
                run_id=agent_call.run_id,
            )
            rows: list[tuple[Any, ...]] = list(query)  # type: ignore[arg-type]
        else:
            rows = compiled.rows(
                {
                    "ids": list(ids),
                    "app_id": self.run.app.pk,
                    "now": self.now,
                    "call_id": agent_call.pk,
                    "run_id": agent_call.run_id,
                }
            )
        refs = _references_from_rows(rows)
        self.learn(refs.values())
        return refs

    def learn(self, references: Iterable["CitationReference | ProofReference"]) -> None:
        """Decide the versions of references read with ``app_lease_current``."""
        for ref in references:
            if ref.version_id not in self._versions:
                self._versions[ref.version_id] = self.refusal(ref) is None

    def refusal(self, ref: "CitationReference | ProofReference") -> CapabilityRefusal | None:
        """Why the app may not use the version of a reference read with
        ``app_lease_current`` (the capability rule of knowledge), or None."""
        version = ref.version
        leased = ref.app_lease_current  # type: ignore[union-attr]
        return refusal_of(self.run.app, version.status, version.knowledge.tenant_id, leased)

    def prefetch_versions(self, versions: Iterable["KnowledgeVersion | ProofVersion"]) -> None:
        """Decide many versions with one query (the capability rule of knowledge)."""
        pending = [v.pk for v in versions if v.pk not in self._versions]
        if not pending:
            return
        for pk, refusal in capability_refusals(self.run.app, pending, self.now).items():
            self._versions[pk] = refusal is None

    def version_ok(self, version: "KnowledgeVersion | ProofVersion") -> bool:
        if version.pk not in self._versions:
            self.prefetch_versions([version])
        return self._versions[version.pk]

    def prefetch_documents(self, documents: Iterable["Document | ProofDocument | None"]) -> None:
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
            # A ProofDocument carries what the rule reads of an unrestricted document (its
            # version's tenant); a restricted one is always a Document (guardian's check).
            self._documents[document.pk] = user_may_read_document(
                self.run.owner,
                document,  # type: ignore[arg-type]
                checker=getattr(self, "_checker", None),
            )

    def document_ok(self, document: "Document | ProofDocument") -> bool:
        if document.pk not in self._documents:
            self.prefetch_documents([document])
        return self._documents[document.pk]

    def reference_ok(self, ref: "CitationReference | ProofReference") -> bool:
        if not self.version_ok(ref.version):
            return False
        if ref.document is None:
            return True
        return self.document_ok(ref.document)


# What the source proof reads of a reference, in this order (``_proof_query``).
_PROOF_COLUMNS = (
    "id",
    "run_id",
    "agent_call_id",
    "version_id",
    "document_id",
    "version__status",
    "version__knowledge_id",
    "version__knowledge__tenant_id",
    "document__version_id",
    "document__key",
    "document__restricted",
    "app_lease_current",
    "in_view",
)


def _proof_query(
    *, ids: list[str], app_id: int, now: datetime, call_id: int, run_id: str
) -> QuerySet[CitationReference]:
    """The source proof's read of references, written with the ORM: the lease rule is
    knowledge's ``app_lease_current``, the evidence view ``in_evidence_view``."""
    # Only the model's own quoted names are formatted in; the ids are one array parameter,
    # so the statement's text is the same for any number of references.
    if connection.vendor == "postgresql":
        column = connection.ops.quote_name(CitationReference._meta.db_table) + '."id"'
        picked = RawSQL(f"{column} = ANY(%s)", [ids], output_field=BooleanField())  # noqa: S611
        references = CitationReference.objects.filter(picked)
    else:
        # SQLite (the embedded default) has no arrays: an IN list, whose text depends on the
        # number of ids, so ``compiled_once`` finds no array slot and runs this as written.
        references = CitationReference.objects.filter(pk__in=ids)
    query = (
        references.annotate(
            app_lease_current=lease_of_version(app_id, now),
            in_view=in_evidence_view(AgentCall(pk=call_id, run_id=run_id)),
        )
        .order_by()
        .values_list(*_PROOF_COLUMNS)
    )
    return query  # type: ignore[return-value]


class ProofKnowledge(NamedTuple):
    tenant_id: int


class ProofVersion(NamedTuple):
    """A reference's knowledge version as the capability rule reads it."""

    pk: int
    status: str
    knowledge: ProofKnowledge


class ProofDocument(NamedTuple):
    """A document as the owner's read right reads it (``user_may_read_document``): its
    version's knowledge tenant and whether it is restricted; never its text."""

    pk: int
    version_id: int
    key: str
    restricted: bool
    version: ProofVersion


class ProofReference(NamedTuple):
    """A reference as the source proof reads it: the attributes ``SourceAccess`` and
    Publication read of a ``CitationReference`` with ``select_related`` version and
    document, plus the capability (``app_lease_current``) and the view flag."""

    pk: str
    run_id: str
    agent_call_id: int
    version_id: int
    document_id: int | None
    version: ProofVersion
    document: "ProofDocument | Document | None"
    app_lease_current: bool
    in_view: bool


def _references_from_rows(rows: Iterable[tuple[Any, ...]]) -> dict[str, ProofReference]:
    """Light rows holding only what the proof reads (a model instance costs ``from_db``
    and a descriptor per relation: a quarter of a commit's CPU at 20 citations); one
    version per version, shared by its references and documents.

    A restricted document (guardian checks object permissions on a model instance) and
    a document of another version than its reference's (whose version the ORM loads
    when the read right asks for it) stay ``Document`` instances, as the ORM reads them."""
    db = connection.alias
    versions: dict[int, ProofVersion] = {}
    models: dict[int, KnowledgeVersion] = {}
    refs: dict[str, ProofReference] = {}
    for row in rows:
        (pk, run_id, call_id, version_id, document_id, status, knowledge_id, tenant_id) = row[:8]
        document_version_id, document_key, restricted, leased, in_view = row[8:]
        version = versions.get(version_id)
        if version is None:
            version = versions[version_id] = ProofVersion(
                version_id, status, ProofKnowledge(tenant_id)
            )
        document: ProofDocument | Document | None = None
        if document_id is None:
            pass
        elif not restricted and document_version_id == version_id:
            document = ProofDocument(
                document_id, document_version_id, document_key, restricted, version
            )
        else:
            document = Document.from_db(
                db,
                ["id", "version_id", "key", "restricted"],
                [document_id, document_version_id, document_key, restricted],
            )
            if document_version_id == version_id:
                model = models.get(version_id)
                if model is None:
                    model = models[version_id] = KnowledgeVersion.from_db(
                        db, ["id", "knowledge_id", "status"], [version_id, knowledge_id, status]
                    )
                    model.knowledge = Knowledge.from_db(
                        db, ["id", "tenant_id"], [knowledge_id, tenant_id]
                    )
                document.version = model
        refs[pk] = ProofReference(
            pk, run_id, call_id, version_id, document_id, version, document, leased, in_view
        )
    return refs
