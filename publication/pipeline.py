"""Publication: one owner turns every answer candidate into a durable,
revisioned, source-bound block — or refuses exactly the part that must be refused.

``publish_candidate`` runs the eight steps of DESIGN.md "Publication" in order:
intake → source proof → degrade → prepare → revision rules → optional preview →
commit → deliver. "Shown", "saved" and "the run succeeded" are different facts:
only a COMMITTED (or UNCHANGED) receipt says saved, and only after the database
confirmed the transaction that wrote the revision.

Two deliberate refinements of the order (docs/publication.md):

* The *mechanical* cleanup (control characters, line endings) runs at intake,
  before the source proof, so the markers that are proven are byte for byte the
  markers that are stored: a control character inside a marker must not turn an
  unknown ID into an unproven real one after the proof.
* Numeric values are decided in "degrade" and rendered in "prepare", together
  with the display bound, so a cut never falls inside a rendered value.
"""

import hashlib
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, cast

from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import F, Model
from django.utils import timezone

from citations.evidence import ProofReference, SourceAccess, evidence_call_ids
from citations.markers import Markers, parse_markers
from citations.models import CitationReference, NumericHandle
from foundation import observability
from foundation.compiled import server_binding_cursor
from foundation.faults import maybe_fault
from foundation.ids import ID_PATTERN, new_publication_id
from publication.models import (
    REVISIONS_PER_BLOCK,
    REVISIONS_PER_RUN,
    AnswerBlock,
    BlockDependency,
    BlockRevision,
    PublicationAttempt,
    SourceBinding,
    SourceHint,
)
from publication.sources import SourceGraph, prefetch_references
from publication.text import (
    MAX_DISPLAY_CHARS,
    TRUNCATION_NOTE,
    VALUE_UNAVAILABLE,
    clean_text,
    render_content,
)
from runs.events import RunEnded, RunFenced, append_event_seq
from runs.lifecycle import lock_for_execution
from runs.models import AgentCall, Run

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_DISPLAY_CHARS",
    "TRUNCATION_NOTE",
    "VALUE_UNAVAILABLE",
    "Effect",
    "Outcome",
    "Reason",
    "Receipt",
    "body_digest",
    "clean_text",
    "publish_candidate",
]

_PLATFORM_ID = {
    prefix: re.compile(rf"^{prefix}_{ID_PATTERN}$") for prefix in ("cite", "num", "pub")
}
_MAX_ID = 200  # the width of the columns that store IDs as written


class Reason(StrEnum):
    EMPTY_CANDIDATE = "EMPTY_CANDIDATE"
    SOURCE_NOT_AUTHORIZED = "SOURCE_NOT_AUTHORIZED"
    DEPENDENCY_NOT_AUTHORIZED = "DEPENDENCY_NOT_AUTHORIZED"
    REPLACES_TARGET_INVALID = "REPLACES_TARGET_INVALID"
    BLOCK_REVISION_QUOTA_EXCEEDED = "BLOCK_REVISION_QUOTA_EXCEEDED"
    RUN_REVISION_QUOTA_EXCEEDED = "RUN_REVISION_QUOTA_EXCEEDED"
    RUN_ENDED = "RUN_ENDED"
    SAVE_FAILED = "SAVE_FAILED"
    SAVE_OUTCOME_UNKNOWN = "SAVE_OUTCOME_UNKNOWN"
    WORKER_LOST = "WORKER_LOST"


class Effect(StrEnum):
    CREATE = "create"
    REVISE = "revise"


Outcome = PublicationAttempt.Outcome


@dataclass(frozen=True)
class Receipt:
    """What Publication says about one candidate. Versioned when saved."""

    outcome: str
    candidate_id: str
    publication_id: str | None = None
    revision: int | None = None
    delivery_ordinal: int | None = None
    body_digest: str = ""
    source_hint: str = ""
    truncated: bool = False
    reason: str = ""
    effect: str = ""

    @property
    def saved(self) -> bool:
        return self.outcome in (Outcome.COMMITTED, Outcome.UNCHANGED)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}


def body_digest(content: dict[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(content, ensure_ascii=False, sort_keys=True).encode()
    ).hexdigest()


def _shaped(prefix: str, value: str) -> bool:
    """Only a value shaped like a platform ID can name one: skip the query otherwise."""
    return bool(_PLATFORM_ID[prefix].match(value))


# A cited ID's reference: as the source proof reads it, or behind a numeric handle.
_Reference = ProofReference | CitationReference


@dataclass
class Candidate:
    run: Run
    agent_call: AgentCall
    entry: str
    content: dict[str, Any]
    replaces: str = ""
    attempt: PublicationAttempt = field(default=None)  # type: ignore[assignment]
    # Source proof: every cited ID as written → its reference (None: resolves to nothing).
    refs: dict[str, ProofReference | None] = field(default_factory=dict)
    in_view: set[str] = field(default_factory=set)
    blocks: dict[str, AnswerBlock] = field(default_factory=dict)
    unresolved_blocks: set[str] = field(default_factory=set)
    # Degrade: handle → (rendered value, its reference).
    values: dict[str, tuple[str, CitationReference | None]] = field(default_factory=dict)
    # What is stored (prepare).
    bindings: list[tuple[str, _Reference | None, bool]] = field(default_factory=list)
    dependencies: list[AnswerBlock] = field(default_factory=list)
    source_hint: str = SourceHint.NONE
    truncated: bool = False
    rejection: tuple[Reason, str] | None = None
    _view: list[int] | None = None
    _graph: SourceGraph | None = None
    _markers: tuple[str, Markers] | None = None

    @property
    def effect(self) -> str:
        return Effect.REVISE if self.replaces else Effect.CREATE

    def texts(self) -> list[str]:
        if self.content["type"] == "text":
            return [self.content["text"]]
        return [*self.content["columns"], *(cell for row in self.content["rows"] for cell in row)]

    def markers(self) -> Markers:
        """The markers of the current content, parsed once per text (intake, degrade and
        prepare ask for them; the text changes only when prepare renders it)."""
        text = "\n".join(self.texts())
        if self._markers is None or self._markers[0] != text:
            self._markers = (text, parse_markers(text))
        return self._markers[1]

    def view(self) -> list[int]:
        """The agent call's evidence view (its own and its authorized sub-calls')."""
        if self._view is None:
            self._view = evidence_call_ids(self.agent_call)
        return self._view

    def cited_ids(self) -> list[str]:
        """What a later re-check needs: every ID as written and the references behind values."""
        ids = [cited for cited, _, _ in self.bindings if not cited.startswith("num:")]
        ids += [ref.pk for _, ref, _ in self.bindings if ref is not None]
        return list(dict.fromkeys(ids))

    def binding_key(self) -> tuple[frozenset[tuple[str, str | None, bool]], frozenset[str], str]:
        return (
            frozenset((cited, ref.pk if ref else None, ok) for cited, ref, ok in self.bindings),
            frozenset(b.pk for b in self.dependencies),
            self.source_hint,
        )


# --- 1. intake ------------------------------------------------------------------


def _cell(value: object) -> str:
    return "" if value is None else clean_text(str(value))


def _extract(body: object) -> dict[str, Any]:
    """The readable body of a candidate, or an empty text when there is none.

    A text, a {type: text, text} or a {type: table, columns, rows}. Anything else
    has no safely extractable body: nothing is invented for it.
    """
    if isinstance(body, str):
        return {"type": "text", "text": clean_text(body)}
    if isinstance(body, dict) and body.get("type") == "table":
        columns = body.get("columns")
        rows = body.get("rows")
        columns = [_cell(c) for c in columns] if isinstance(columns, list) else []
        rows = rows if isinstance(rows, list) else []
        return {
            "type": "table",
            "columns": columns,
            "rows": [
                [_cell(c) for c in row] if isinstance(row, list) else [_cell(row)] for row in rows
            ],
        }
    if isinstance(body, dict) and isinstance(body.get("text"), str):
        return {"type": "text", "text": clean_text(body["text"])}
    return {"type": "text", "text": ""}


def _intake(
    run: Run, agent_call: AgentCall, entry: str, body: object, replaces: object
) -> Candidate:
    if entry not in PublicationAttempt.Entry.values:
        raise ValueError(f"unknown Publication entry {entry!r}")
    if replaces is None:
        replaces = ""
    elif not isinstance(replaces, str):
        # A target that is not even text is still an attempt to modify: it fails as one.
        replaces = json.dumps(replaces, ensure_ascii=False, default=str) or "?"
    candidate = Candidate(
        run=run, agent_call=agent_call, entry=entry, content=_extract(body), replaces=replaces
    )
    # The candidate's in-run identity. ``replaces`` is kept as an attempt to
    # modify (cleaned and bounded for storage), whatever it names.
    candidate.attempt = PublicationAttempt(
        run=run,
        agent_call=agent_call,
        entry=entry,
        outcome=Outcome.REJECTED,
        replaces=clean_text(replaces)[:_MAX_ID],
    )
    return candidate


# --- 2. source proof ------------------------------------------------------------


def _prove_sources(
    candidate: Candidate, access: SourceAccess, cited: list[str], block_ids: list[str]
) -> None:
    """Per block: does every source it depends on pass the owner's current authorization?

    A real reference the owner may not use now → the block's effect is refused.
    An ID that resolves to nothing, or to a readable source this call did not
    retrieve → kept, unverified (degraded later). Idempotent per ID.
    """
    cited = [c for c in cited if c not in candidate.refs]
    lookup = [c for c in cited if _shaped("cite", c)]
    refs: dict[str, ProofReference] = {}
    if lookup:
        # One statement: the references, their version's capability (the lease) and
        # whether each is in this call's evidence view (citations/evidence.py).
        refs = access.proof_references(lookup, candidate.agent_call)
        prefetch_references(access, refs.values())
    for cited_id in cited:
        ref = refs.get(cited_id)
        candidate.refs[cited_id] = ref
        if ref is None:
            continue
        if not access.reference_ok(ref):
            candidate.rejection = (Reason.SOURCE_NOT_AUTHORIZED, cited_id)
            return
        if ref.run_id == candidate.run.pk and ref.in_view:
            candidate.in_view.add(cited_id)

    # A reference to the block being revised is no dependency: the revision replaces it.
    pending = [
        b
        for b in block_ids
        if b != candidate.replaces
        and b not in candidate.blocks
        and b not in candidate.unresolved_blocks
    ]
    if not pending:
        return
    if candidate._graph is None:
        candidate._graph = SourceGraph.for_run(candidate.run, access)
    graph = candidate._graph
    for block_id in pending:
        block = graph.blocks.get(block_id)
        if block is None:
            # Another run's block, a garbled or an invented ID: nothing to inherit.
            candidate.unresolved_blocks.add(block_id)
        elif not graph.block_sources_ok(block_id):
            candidate.rejection = (Reason.DEPENDENCY_NOT_AUTHORIZED, block_id)
            return
        else:
            candidate.blocks[block_id] = block


# --- 3. degrade ------------------------------------------------------------------


def _degrade(candidate: Candidate, access: SourceAccess) -> None:
    """Decide the numeric values: only a handle of this call's evidence view whose
    source the owner may still use renders its value; any other renders as
    "value unavailable" (never a guess). Unknown citations stay, unverified."""
    wanted = [h for h in candidate.markers().numeric_handles if _shaped("num", h)]
    if not wanted:
        return
    handles = list(
        NumericHandle.objects.filter(
            run=candidate.run, agent_call_id__in=candidate.view(), pk__in=wanted
        ).select_related(
            "fact__document__version__knowledge",
            "version__knowledge",
            "citation__version__knowledge",
            "citation__document__version__knowledge",
        )
    )
    prefetch_references(access, (h.citation for h in handles if h.citation is not None))
    for handle in handles:
        ok = access.version_ok(handle.version)
        if handle.citation is not None:
            ok = ok and access.reference_ok(handle.citation)
        elif handle.fact.document_id is not None:
            ok = ok and access.document_ok(handle.fact.document)
        if ok:
            candidate.values[handle.pk] = (handle.fact.display(), handle.citation)


# --- 4. prepare ------------------------------------------------------------------


def _source_hint(flags: list[bool]) -> str:
    if not flags:
        return SourceHint.NONE
    if all(flags):
        return SourceHint.VERIFIED
    return SourceHint.PARTIAL if any(flags) else SourceHint.UNVERIFIED


def _prepare(candidate: Candidate, access: SourceAccess) -> None:
    """Render values, bound the display, and bind exactly what is stored."""
    rendered = render_content(
        candidate.content, {h: value for h, (value, _) in candidate.values.items()}
    )
    candidate.content = rendered.content
    candidate.truncated = rendered.truncated

    markers = candidate.markers()
    # A rendered value could complete a marker the proof never saw; prove it now.
    unseen = [c for c in markers.cited_ids if c not in candidate.refs]
    unseen_blocks = [
        b
        for b in markers.block_ids
        if b not in candidate.blocks and b not in candidate.unresolved_blocks
    ]
    if unseen or unseen_blocks:
        _prove_sources(candidate, access, unseen, unseen_blocks)
        if candidate.rejection:
            return

    bindings: dict[str, tuple[_Reference | None, bool]] = {}
    flags = []
    for cited in markers.cited_ids:
        verified = cited in candidate.in_view
        bindings.setdefault(cited[:_MAX_ID], (candidate.refs.get(cited), verified))
        flags.append(verified)
    for handle in dict.fromkeys(rendered.handles):
        value = candidate.values.get(handle)
        flags.append(value is not None)
        if value is not None and value[1] is not None:
            # The value inherits its source: revoking it protects the block.
            bindings.setdefault(f"num:{handle}"[:_MAX_ID], (value[1], True))
    stored_blocks = set(markers.block_ids)
    flags += [False for b in candidate.unresolved_blocks if b in stored_blocks]
    candidate.bindings = [(cited, ref, ok) for cited, (ref, ok) in bindings.items()]
    candidate.dependencies = [
        candidate.blocks[b] for b in markers.block_ids if b in candidate.blocks
    ]
    candidate.source_hint = _source_hint(flags)


# --- 5. revision rules -----------------------------------------------------------


def _revision_target(run: Run, replaces: str) -> AnswerBlock | None:
    """``replaces`` must name a publication ID of this very run."""
    if not _shaped("pub", replaces):
        return None
    return AnswerBlock.objects.filter(run=run, pk=replaces).first()


def _same_proof(revision: BlockRevision, candidate: Candidate) -> bool:
    stored = (
        frozenset((b.cited_id, b.citation_id, b.verified) for b in revision.bindings.all()),
        frozenset(d.depends_on_id for d in revision.dependencies.all()),
        revision.source_hint,
    )
    return stored == candidate.binding_key()


def _find_duplicate(
    candidate: Candidate, target: AnswerBlock | None, digest: str
) -> BlockRevision | None:
    """An exact duplicate of a *committed* current revision: identical body,
    bindings, dependencies and hint.

    Authorization was re-checked for this very candidate in step 2, so a revoked
    source makes a byte-identical repeat fail instead of passing as unchanged.
    Whitespace changes alter the digest: they are never duplicates. A legacy
    revision (hint unknown) never matches. Previews are not in this pool: only
    committed revisions are, so a preview can never mask a receipt.
    """
    revisions = BlockRevision.objects.filter(
        body_digest=digest, revision=F("block__current_revision")
    )
    if target is not None:
        revisions = revisions.filter(block=target)
    else:
        revisions = revisions.filter(run=candidate.run, block__agent_call=candidate.agent_call)
    for revision in revisions.select_related("block").prefetch_related("bindings", "dependencies"):
        if _same_proof(revision, candidate):
            return revision
    return None


def _quota_refusal(locked_run: Mapping[str, Any], block: AnswerBlock) -> Reason | None:
    """Quotas, read under the run's lock: 2 modifications per block, 8 per run.

    The attempt ledger counts every modification that consumed quota, including
    a visible preview whose save failed.
    """
    used_by_block = PublicationAttempt.objects.filter(block=block, quota_consumed=True).count()
    if used_by_block >= REVISIONS_PER_BLOCK:
        return Reason.BLOCK_REVISION_QUOTA_EXCEEDED
    if locked_run["revision_quota_used"] >= REVISIONS_PER_RUN:
        return Reason.RUN_REVISION_QUOTA_EXCEEDED
    return None


# --- the pipeline ---------------------------------------------------------------


def publish_candidate(
    *,
    run: Run,
    agent_call: AgentCall,
    entry: str,
    body: str | dict[str, Any],
    replaces: str | None = None,
    preview: bool = True,
) -> Receipt:
    """Publish one candidate (entry "A": assistant text, "B": send_answer_part)."""
    receipt = _publish(run, agent_call, entry, body, replaces, preview)
    observability.publication_outcome(
        run_id=run.pk,
        candidate_id=receipt.candidate_id,
        outcome=str(receipt.outcome),
        reason=receipt.reason or "",
    )
    return receipt


def _publish(
    run: Run,
    agent_call: AgentCall,
    entry: str,
    body: str | dict[str, Any],
    replaces: str | None,
    preview: bool,
) -> Receipt:
    access = SourceAccess(run)
    candidate = _intake(run, agent_call, entry, body, replaces)
    if not any(t.strip() for t in candidate.texts()):
        return _reject(candidate, Reason.EMPTY_CANDIDATE, target=_target_if_any(candidate))

    markers = candidate.markers()
    _prove_sources(candidate, access, list(markers.cited_ids), list(markers.block_ids))
    if not candidate.rejection:
        _degrade(candidate, access)
        _prepare(candidate, access)
    if candidate.rejection:
        return _reject(candidate, *candidate.rejection, target=_target_if_any(candidate))

    digest = body_digest(candidate.content)
    candidate.attempt.body_digest = digest
    target = None
    if candidate.replaces:
        target = _revision_target(run, candidate.replaces)
        if target is None:
            # A failed modification: never silently a new block, never a deletion.
            return _reject(candidate, Reason.REPLACES_TARGET_INVALID)

    if preview:
        # Before anything is shown: a duplicate is never previewed (for a new block
        # on PostgreSQL the preview's own first statement checks it). Without a
        # preview the commit's own check under the run's lock is the only one.
        if target is not None or connection.vendor != "postgresql":
            duplicate = _find_duplicate(candidate, target, digest)
            if duplicate is not None:
                return _unchanged(candidate, duplicate)
        refused = _preview(candidate, target)
        if refused is not None:
            return refused
    return _commit(candidate, target, digest)


def _target_if_any(candidate: Candidate) -> AnswerBlock | None:
    return _revision_target(candidate.run, candidate.replaces) if candidate.replaces else None


_LOCKED_COLUMNS = ("status", "last_seq", "block_count", "revision_quota_used")


def _lock_run(candidate: Candidate) -> Mapping[str, Any]:
    """Lock the run row: it serializes the run's counters, quotas and event seq.

    The kernel's fence (runs/lifecycle.py ``lock_for_execution``), with the four plain
    columns the commit decides on: an execution that lost the run (``RunFenced``)
    writes nothing, not even its refusal; an ended run's row is returned for the
    caller's ``RUN_ENDED``."""
    run = candidate.run
    row = lock_for_execution(run.pk, run.execution_epoch, _LOCKED_COLUMNS, ended_ok=True)
    run.last_seq = row["last_seq"]
    return row


def _fill_attempt(candidate: Candidate, outcome: str, **fields: Any) -> PublicationAttempt:
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


def _save_attempt(
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
    values = _row(PublicationAttempt, attempt.__dict__)
    with server_binding_cursor() as cursor:
        if attempt.pk is not None:
            cursor.execute(_statement("attempt:update", _attempt_update_sql), [*values, attempt.pk])
            if cursor.rowcount != 1:
                raise DatabaseError("Forced update did not affect any rows.")  # as save()
            _remember_stored(attempt)
            return True
        if unless_same_digest is None:
            cursor.execute(_statement("attempt:insert", _attempt_insert_sql), values)
        else:
            candidate = unless_same_digest
            cursor.execute(
                _statement("attempt:insert-unless-same-digest", _attempt_insert_unless_sql),
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
    commit rewrites only the columns that changed since (``_write_new_block``). The
    values are the attempt's own attributes, which the pipeline reassigns, never mutates."""
    attempt.__dict__["_stored"] = {
        attname: attempt.__dict__[attname] for attname, *_ in _inserted(PublicationAttempt)
    }


def _changed_since_stored(attempt: PublicationAttempt) -> tuple[str, ...] | None:
    """The attnames whose value differs from the stored row; None when it is unknown."""
    stored = attempt.__dict__.get("_stored")
    if stored is None:
        return None
    return tuple(
        attname
        for attname, *_ in _inserted(PublicationAttempt)
        if attempt.__dict__[attname] != stored[attname]
    )


def _attempt_insert_sql() -> str:
    columns = _column_list(PublicationAttempt)
    return (
        f"INSERT INTO {_table(PublicationAttempt)} ({', '.join(columns)})"  # noqa: S608
        f" VALUES ({_marks(len(columns))}) RETURNING id"
    )


def _attempt_insert_unless_sql() -> str:
    columns = _column_list(PublicationAttempt)
    return (
        f"INSERT INTO {_table(PublicationAttempt)} ({', '.join(columns)})"  # noqa: S608
        f" SELECT {_typed_marks(PublicationAttempt)} WHERE NOT EXISTS ({_same_digest_sql()})"
        " RETURNING id"
    )


def _attempt_update_sql() -> str:
    columns = _column_list(PublicationAttempt)
    return (
        f"UPDATE {_table(PublicationAttempt)} SET "  # noqa: S608
        + ", ".join(f"{c} = %s" for c in columns)
        + " WHERE id = %s"
    )


def _refusal_data(
    candidate: Candidate, attempt: PublicationAttempt, reason: str, target: AnswerBlock | None
) -> dict[str, Any]:
    """The public data of an event saying a candidate's effect did not happen."""
    data = {
        "candidateId": attempt.candidate_id,
        "code": str(reason),
        "effect": str(candidate.effect),
    }
    if target is not None:
        data["publicationId"] = target.pk
    return data


def _reject(
    candidate: Candidate,
    reason: Reason,
    detail: str = "",
    *,
    target: AnswerBlock | None = None,
    locked: bool = False,
    event: bool = True,
) -> Receipt:
    """Refuse this candidate's effect only; the committed body of ``target`` stays."""
    attempt = _fill_attempt(candidate, Outcome.REJECTED, reason=reason, block=target)
    with transaction.atomic():
        _save_attempt(attempt)
        if event:
            data = _refusal_data(candidate, attempt, reason, target)
            if detail and reason in (
                Reason.SOURCE_NOT_AUTHORIZED,
                Reason.DEPENDENCY_NOT_AUTHORIZED,
            ):
                # The refused ID is the run's own marker text: safe to name.
                data["source"] = detail
            append_event_seq(
                candidate.run,
                "answer.rejected",
                data,
                locked=locked,
                epoch=None if locked else candidate.run.execution_epoch,
            )
    return Receipt(
        outcome=Outcome.REJECTED,
        candidate_id=attempt.candidate_id,
        publication_id=target.pk if target else None,
        source_hint=candidate.source_hint,
        truncated=candidate.truncated,
        reason=str(reason),
        effect=str(candidate.effect),
    )


def _unchanged(candidate: Candidate, revision: BlockRevision, *, locked: bool = False) -> Receipt:
    """The original receipt is reused: no new revision, event or quota. Its attempt is
    recorded under the run's fence (``locked``: the caller holds it already)."""
    attempt = _fill_attempt(
        candidate,
        Outcome.UNCHANGED,
        block=revision.block,
        revision=revision.revision,
        body_digest=revision.body_digest,
    )
    with transaction.atomic():
        if not locked:
            _lock_run(candidate)
        _save_attempt(attempt)
    return Receipt(
        outcome=Outcome.UNCHANGED,
        candidate_id=attempt.candidate_id,
        publication_id=revision.block_id,
        revision=revision.revision,
        delivery_ordinal=revision.block.delivery_ordinal,
        body_digest=revision.body_digest,
        source_hint=revision.source_hint or SourceHint.UNKNOWN,
        truncated=revision.truncated,
        effect=str(candidate.effect),
    )


# --- 6. optional preview ---------------------------------------------------------


def _preview(candidate: Candidate, target: AnswerBlock | None) -> Receipt | None:
    """Show the prepared candidate before the write. Not a save.

    A visible modification consumes quota even if its save then fails, so for a
    revision the quota is taken in this transaction, committed before the write.
    """
    if target is None:
        return _preview_new_block(candidate)
    with transaction.atomic():
        row = _lock_run(candidate)
        if row["status"] in Run.TERMINAL:
            return _reject(candidate, Reason.RUN_ENDED, target=target, locked=True, event=False)
        quota = False
        if target is not None:
            refusal = _quota_refusal(row, target)
            if refusal:
                return _reject(candidate, refusal, target=target, locked=True)
            Run.objects.filter(pk=candidate.run.pk).update(
                revision_quota_used=F("revision_quota_used") + 1
            )
            quota = True
        _save_attempt(
            _fill_attempt(candidate, Outcome.PREVIEWED, block=target, quota_consumed=quota)
        )
        data = {
            "candidateId": candidate.attempt.candidate_id,
            "revision": (target.current_revision + 1) if target else 1,
        }
        if target is not None:
            data["publicationId"] = target.pk
            data["deliveryOrdinal"] = target.delivery_ordinal
        append_event_seq(candidate.run, "answer.preview", data, locked=True)
    return None


def _preview_new_block(candidate: Candidate) -> Receipt | None:
    """A new block takes no quota: one short transaction of two statements.

    On PostgreSQL the attempt comes first, inserted as PREVIEWED unless the run
    already holds a current revision of this call with the same body digest — the
    duplicate check before anything is shown, in the same statement. Only then is
    ``answer.preview`` appended, whose statement locks the run and refuses an
    ended one (the attempt's row is then rolled back with it). Should a revision
    with this digest exist, the full duplicate check (bindings, dependencies,
    hint) decides: an exact duplicate is never previewed, any other candidate is.
    """
    attempt = _fill_attempt(candidate, Outcome.PREVIEWED, block=None)
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql" and not _save_attempt(
                attempt, unless_same_digest=candidate
            ):
                duplicate = _find_duplicate(candidate, None, attempt.body_digest)
                if duplicate is not None:
                    return _unchanged(candidate, duplicate)
                _save_attempt(attempt)
            append_event_seq(
                candidate.run,
                "answer.preview",
                {"candidateId": attempt.candidate_id, "revision": 1},
                epoch=candidate.run.execution_epoch,
            )
            if connection.vendor != "postgresql":
                _save_attempt(attempt)
    except RunFenced:
        raise  # the execution lost the run: nothing of it is recorded
    except RunEnded:
        attempt.pk = None  # rolled back with the refused append
        attempt._state.adding = True
        attempt.__dict__.pop("_stored", None)
        return _reject(candidate, Reason.RUN_ENDED, event=False)
    return None


# --- 7. commit -------------------------------------------------------------------


@dataclass(frozen=True)
class _Written:
    """What a commit wrote, as its event and its receipt name it."""

    block_id: str
    delivery_ordinal: int
    revision: int
    body_digest: str
    source_hint: str | None
    truncated: bool

    @classmethod
    def of(cls, revision: BlockRevision) -> "_Written":
        return cls(
            block_id=revision.block_id,
            delivery_ordinal=revision.block.delivery_ordinal,
            revision=revision.revision,
            body_digest=revision.body_digest,
            source_hint=revision.source_hint,
            truncated=revision.truncated,
        )


def _commit(candidate: Candidate, target: AnswerBlock | None, digest: str) -> Receipt:
    """One transaction: run and block locked, revision, bindings, dependencies,
    the delivery event (outbox) and the run's counters. The receipt exists only
    once the database confirmed it."""
    attempt = candidate.attempt
    reserved = attempt.quota_consumed  # by a visible preview, in its own transaction
    commit_sent = False
    try:
        with transaction.atomic():
            row = _lock_run(candidate)
            if row["status"] in Run.TERMINAL:
                # Recovery (or a cancel) ended the run: no commit may land after it.
                return _reject(candidate, Reason.RUN_ENDED, target=target, locked=True, event=False)
            now = timezone.now()
            written: _Written | None = None
            if target is None and connection.vendor == "postgresql":
                written = _write_new_block(candidate, row, digest, now)
            if written is None:
                # Again under the lock: two identical candidates racing never make two blocks.
                duplicate = _find_duplicate(candidate, target, digest)
                if duplicate is not None:
                    return _unchanged(candidate, duplicate, locked=True)
                outcome = _write_with_the_orm(candidate, target, row, digest, now)
                if isinstance(outcome, Receipt):
                    return outcome
                written = outcome
            # The outbox: written in this transaction, delivered after it (8.).
            append_event_seq(
                candidate.run,
                "answer.published",
                {
                    "publicationId": written.block_id,
                    "candidateId": attempt.candidate_id,
                    "revision": written.revision,
                    "deliveryOrdinal": written.delivery_ordinal,
                    "outcome": Outcome.COMMITTED,
                },
                locked=True,
            )
            maybe_fault("during_publication_commit")
            # Everything is written; what follows is the COMMIT itself, whose
            # failure leaves the outcome unknown.
            commit_sent = True
    except DatabaseError as exc:
        # Whatever this transaction took is not taken unless it committed.
        attempt.quota_consumed = reserved
        return _save_failed(candidate, target, commit_sent=commit_sent, error=exc)
    return _committed_receipt(candidate, written)


def _write_with_the_orm(
    candidate: Candidate,
    target: AnswerBlock | None,
    row: Mapping[str, Any],
    digest: str,
    now: datetime,
) -> _Written | Receipt:
    """Block (or its next revision), counters, attempt, revision, bindings and
    dependencies, statement by statement (revisions, SQLite, a same-body block)."""
    attempt = candidate.attempt
    run_updates: dict[str, Any] = {}
    if target is not None and not attempt.quota_consumed:
        refusal = _quota_refusal(row, target)
        if refusal:
            return _reject(candidate, refusal, target=target, locked=True)
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
    _save_attempt(
        _fill_attempt(candidate, Outcome.COMMITTED, block=block, revision=block.current_revision)
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
    return _Written.of(revision)


# --- the raw statements (PostgreSQL), their text made once per process ----------

# Field types whose Python value is what psycopg is given (the ORM's preparation is
# the identity for them); any other field is prepared by the ORM, as save() would.
_PASSED_AS_IS = frozenset(
    {
        "AutoField",
        "BigAutoField",
        "BooleanField",
        "CharField",
        "DateTimeField",
        "ForeignKey",
        "IntegerField",
        "OneToOneField",
        "PositiveIntegerField",
        "TextField",
    }
)
_fields_cache: dict[tuple[str, type[Model], tuple[str, ...]], tuple[Any, ...]] = {}
_sql_cache: dict[tuple[str, str], str] = {}


def _inserted(model: type[Model], skip: tuple[str, ...] = ()) -> tuple[Any, ...]:
    """(attname, field, prepared by the ORM?, quoted column) of each column the ORM's
    INSERT of ``model`` writes, in its order: the models' shape, read once."""
    key = (connection.vendor, model, skip)
    fields = _fields_cache.get(key)
    if fields is None:
        fields = tuple(
            (
                f.attname,
                f,
                f.get_internal_type() not in _PASSED_AS_IS,
                connection.ops.quote_name(cast(str, f.column)),
            )
            for f in model._meta.concrete_fields
            if not (f.primary_key and f.db_returning) and f.attname not in skip
        )
        _fields_cache[key] = fields
    return fields


def _row(model: type[Model], values: Mapping[str, Any], skip: tuple[str, ...] = ()) -> list[Any]:
    """The database values of one row: ``values`` by attname, a column not given takes
    its field's default, exactly as the ORM's INSERT would."""
    row = []
    for attname, f, prepared, _ in _inserted(model, skip):
        value = values[attname] if attname in values else f.get_default()
        row.append(f.get_db_prep_save(value, connection) if prepared else value)
    return row


def _column_list(model: type[Model], skip: tuple[str, ...] = ()) -> list[str]:
    return [column for *_, column in _inserted(model, skip)]


def _statement(name: str, build: Any) -> str:
    """The text of a raw statement, built once per process and vendor from the models."""
    key = (connection.vendor, name)
    sql = _sql_cache.get(key)
    if sql is None:
        sql = _sql_cache[key] = build()
    return sql


def _table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _marks(n: int) -> str:
    return ", ".join(["%s"] * n)


def _typed_marks(model: type[Model], skip: tuple[str, ...] = ()) -> str:
    """The placeholders of one row of ``model`` in a ``SELECT`` list, each cast to its
    column's type: bound on the server, a parameter PostgreSQL cannot infer (a NULL, a
    text) would be taken for ``text`` there, which a column of another type refuses.
    The type without its length (``varchar``, not ``varchar(32)``): an explicit cast
    to a length truncates, and an overlong value must fail as the ORM's INSERT does."""
    return ", ".join(
        f"%s::{_LENGTH.sub('', cast(str, f.db_type(connection)))}"
        for _, f, *_ in _inserted(model, skip)
    )


_LENGTH = re.compile(r"\(.*?\)")


def _same_digest_sql() -> str:
    """A current revision of this run and call with this body digest exists: the
    candidate may be a duplicate (params: digest, run, agent call).

    The run's revisions of this body come from ``blockrevision_run_digest``, and each
    one's block is read by its key in a scalar subquery, which PostgreSQL never turns
    into a join: no plan can start from the run's blocks and read all of them."""
    return (
        f"SELECT 1 FROM {_table(BlockRevision)} r WHERE r.body_digest = %s"  # noqa: S608
        f" AND r.run_id = %s AND r.revision = (SELECT b.current_revision FROM {_table(AnswerBlock)} b"
        " WHERE b.id = r.block_id AND b.agent_call_id = %s)"
    )


def _new_block_sql(updated: tuple[str, ...] | None) -> str:
    """The one write of a new block (``_write_new_block``): the attempt inserted
    (``updated`` None) or the previewed row's ``updated`` columns set."""
    block_cols = _column_list(AnswerBlock)
    attempt_cols = _column_list(PublicationAttempt)
    revision_cols = _column_list(BlockRevision, ("attempt_id",))
    if updated is not None:
        columns = {attname: column for attname, *_, column in _inserted(PublicationAttempt)}
        attempt_cols = [columns[attname] for attname in updated] or ['"id"']
    if updated is None:
        attempt_sql = (
            f"INSERT INTO {_table(PublicationAttempt)} ({', '.join(attempt_cols)})"  # noqa: S608
            f" SELECT {_typed_marks(PublicationAttempt)} FROM blk RETURNING id"
        )
    else:  # the previewed row becomes the committed one
        attempt_sql = (
            f"UPDATE {_table(PublicationAttempt)} SET "  # noqa: S608
            + ", ".join(f"{c} = %s" for c in attempt_cols)
            + " WHERE id = %s AND EXISTS (SELECT 1 FROM blk) RETURNING id"
        )
    return (
        f"WITH blk AS (INSERT INTO {_table(AnswerBlock)} ({', '.join(block_cols)})"  # noqa: S608
        f" SELECT {_typed_marks(AnswerBlock)} WHERE NOT EXISTS ({_same_digest_sql()})"
        " RETURNING id),"
        f" att AS ({attempt_sql}),"
        f" rev AS (INSERT INTO {_table(BlockRevision)} ({', '.join(revision_cols)}, attempt_id)"
        f" SELECT {_typed_marks(BlockRevision, ('attempt_id',))}, att.id FROM att RETURNING id),"
        f" bnd AS (INSERT INTO {_table(SourceBinding)} (revision_id, cited_id, citation_id,"
        " verified) SELECT rev.id, b.cited, b.citation, b.verified FROM rev,"
        " unnest(%s::varchar[], %s::varchar[], %s::boolean[]) AS b(cited, citation, verified)),"
        f" dep AS (INSERT INTO {_table(BlockDependency)} (revision_id, depends_on_id)"
        " SELECT rev.id, d FROM rev, unnest(%s::varchar[]) AS d),"
        f" cnt AS (UPDATE {_table(Run)} SET block_count = %s"
        " WHERE id = %s AND EXISTS (SELECT 1 FROM blk))"
        " SELECT att.id, rev.id FROM att, rev"
    )


def _write_new_block(
    candidate: Candidate, row: Mapping[str, Any], digest: str, now: datetime
) -> _Written | None:
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
    _fill_attempt(candidate, Outcome.COMMITTED, block_id=block_id, revision=1)
    updated: tuple[str, ...] | None = None
    attempt_row = _row(PublicationAttempt, attempt.__dict__)
    if previewed:
        # The previewed row becomes the committed one: only what changed is sent.
        updated = _changed_since_stored(attempt)
        if updated is None:  # not written by this process: every column
            updated = tuple(attname for attname, *_ in _inserted(PublicationAttempt))
        positions = {attname: i for i, (attname, *_) in enumerate(_inserted(PublicationAttempt))}
        attempt_row = [attempt_row[positions[attname]] for attname in updated] or [attempt.pk]
    run_id, call_id = candidate.run.pk, candidate.agent_call.pk
    bindings = candidate.bindings
    params = [
        *_row(
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
        *_row(
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
    sql = _statement(f"new_block:{updated}", lambda: _new_block_sql(updated))
    with server_binding_cursor() as cursor:
        cursor.execute(sql, params)
        written = cursor.fetchone()
    if written is None:
        attempt.block_id = attempt.revision = None  # nothing was written
        return None
    attempt.pk = written[0]
    attempt._state.adding = False
    attempt.__dict__.pop("_stored", None)  # committed: no later write starts from it
    return _Written(
        block_id=block_id,
        delivery_ordinal=ordinal,
        revision=1,
        body_digest=digest,
        source_hint=candidate.source_hint,
        truncated=candidate.truncated,
    )


def _committed_receipt(candidate: Candidate, written: _Written) -> Receipt:
    return Receipt(
        outcome=Outcome.COMMITTED,
        candidate_id=candidate.attempt.candidate_id,
        publication_id=written.block_id,
        revision=written.revision,
        delivery_ordinal=written.delivery_ordinal,
        body_digest=written.body_digest,
        source_hint=written.source_hint or SourceHint.UNKNOWN,
        truncated=written.truncated,
        effect=str(candidate.effect),
    )


def _save_failed(
    candidate: Candidate, target: AnswerBlock | None, *, commit_sent: bool, error: Exception
) -> Receipt:
    """The write failed.

    Before the COMMIT was sent the transaction is known to be rolled back: a
    clean failure (REJECTED, SAVE_FAILED). If the COMMIT itself failed (say, the
    connection was cut), the database may or may not have committed: read it
    back on a fresh connection. Found → it is saved, and only then COMMITTED.
    Not found or unreachable → SAVE_UNKNOWN, never reported as saved.
    """
    attempt = candidate.attempt
    logger.warning(
        "publication commit of %s for run %s failed (commit sent: %s): %s",
        attempt.candidate_id,
        candidate.run.pk,
        commit_sent,
        error,
    )
    known_failure = not commit_sent or isinstance(error, IntegrityError)
    if not known_failure:
        try:
            revision = (
                BlockRevision.objects.select_related("block")
                .filter(attempt__candidate_id=attempt.candidate_id)
                .first()
            )
        except DatabaseError:
            revision = None
        if revision is not None:
            return _committed_receipt(candidate, _Written.of(revision))
    outcome = Outcome.REJECTED if known_failure else Outcome.SAVE_UNKNOWN
    reason = Reason.SAVE_FAILED if known_failure else Reason.SAVE_OUTCOME_UNKNOWN
    _record_failure(candidate, target, outcome, reason)
    return Receipt(
        outcome=outcome,
        candidate_id=attempt.candidate_id,
        publication_id=target.pk if target else None,
        source_hint=candidate.source_hint,
        truncated=candidate.truncated,
        reason=str(reason),
        effect=str(candidate.effect),
    )


def _record_failure(
    candidate: Candidate, target: AnswerBlock | None, outcome: str, reason: Reason
) -> None:
    """Best effort: the database may be gone. Never overwrites a COMMITTED attempt
    (a commit that landed after all stays the fact)."""
    attempt = candidate.attempt
    fields = {
        "outcome": outcome,
        "reason": reason,
        "effect": candidate.effect,
        "block": target,
        "revision": None,
        "content": candidate.content,
        "source_hint": candidate.source_hint,
        "truncated": candidate.truncated,
        "cited_ids": candidate.cited_ids(),
        "body_digest": attempt.body_digest,
        "quota_consumed": attempt.quota_consumed,
    }
    try:
        with transaction.atomic():
            row = _lock_run(candidate)
            updated = (
                PublicationAttempt.objects.filter(candidate_id=attempt.candidate_id)
                .exclude(outcome=Outcome.COMMITTED)
                .update(**fields)
            )
            if not updated:
                if PublicationAttempt.objects.filter(candidate_id=attempt.candidate_id).exists():
                    return  # the commit landed: it stays the fact
                PublicationAttempt.objects.create(
                    candidate_id=attempt.candidate_id,
                    run=candidate.run,
                    agent_call=candidate.agent_call,
                    entry=candidate.entry,
                    replaces=attempt.replaces,
                    **fields,
                )
            if row["status"] not in Run.TERMINAL:
                data = _refusal_data(candidate, attempt, reason, target)
                # A failed save is a rejection of this effect; an unknown one is
                # not (it may have landed): its own event, never "published".
                kind = "answer.rejected" if outcome == Outcome.REJECTED else "answer.save_unknown"
                append_event_seq(candidate.run, kind, data, locked=True)
    except DatabaseError:
        logger.warning(
            "could not record the failed attempt %s", attempt.candidate_id, exc_info=True
        )


# --- recovery ----------------------------------------------------------------------


def settle_lost_previews(run: Run, reason: str) -> int:
    """Previews of a lost execution that never reached a commit: shown, never saved,
    never promoted to committed. Each becomes REJECTED for ``reason`` with its
    ``answer.rejected`` event. Under the caller's lock on the run (recovery's), before
    the run's terminal event; how many were settled."""
    pending = list(
        PublicationAttempt.objects.filter(run=run, outcome=Outcome.PREVIEWED).order_by("id")
    )
    for attempt in pending:
        attempt.outcome = Outcome.REJECTED
        attempt.reason = reason
        attempt.save(update_fields=["outcome", "reason"])
        data = {"candidateId": attempt.candidate_id, "code": str(reason), "effect": attempt.effect}
        if attempt.block_id:
            data["publicationId"] = attempt.block_id
        append_event_seq(run, "answer.rejected", data, locked=True)
    return len(pending)
