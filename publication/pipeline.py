"""Publication: one owner turns every answer candidate into a durable,
revisioned, source-bound block — or refuses exactly the part that must be refused.

``publish_candidate`` runs the eight steps of DESIGN.md "Publication" in order:
intake → source proof → degrade → prepare → revision rules → optional preview →
commit → deliver. "Shown", "saved" and "the run succeeded" are different facts:
only a COMMITTED (or UNCHANGED) receipt says saved.
"""

import hashlib
import json
import logging
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from django.db import DatabaseError, transaction
from django.db.models import F
from django.utils import timezone

from citations.evidence import SourceAccess, evidence_call_ids
from citations.markers import ANY_MARKER, NUM_MARKER, parse_markers
from citations.models import CitationReference, NumericHandle
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
from publication.sources import block_sources_ok
from runs.events import append_event
from runs.models import AgentCall, Run
from sparktide.faults import maybe_fault

logger = logging.getLogger(__name__)

MAX_DISPLAY_CHARS = 60_000
TRUNCATION_NOTE = "\n\n〔内容过长，已截断〕"
VALUE_UNAVAILABLE = "〔数值不可用〕"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b\u2028\u2029\ufeff]")


class Reason(StrEnum):
    EMPTY_CANDIDATE = "EMPTY_CANDIDATE"
    SOURCE_NOT_AUTHORIZED = "SOURCE_NOT_AUTHORIZED"
    DEPENDENCY_NOT_AUTHORIZED = "DEPENDENCY_NOT_AUTHORIZED"
    REPLACES_TARGET_INVALID = "REPLACES_TARGET_INVALID"
    BLOCK_REVISION_QUOTA_EXCEEDED = "BLOCK_REVISION_QUOTA_EXCEEDED"
    RUN_REVISION_QUOTA_EXCEEDED = "RUN_REVISION_QUOTA_EXCEEDED"
    SAVE_FAILED = "SAVE_FAILED"
    SAVE_OUTCOME_UNKNOWN = "SAVE_OUTCOME_UNKNOWN"


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

    def as_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}


@dataclass
class Candidate:
    run: Run
    agent_call: AgentCall
    entry: str
    content: dict
    replaces: str = ""
    attempt: PublicationAttempt | None = None
    bindings: list[tuple[str, CitationReference | None, bool]] = field(default_factory=list)
    dependencies: list[AnswerBlock] = field(default_factory=list)
    source_hint: str = SourceHint.NONE
    truncated: bool = False
    rejection: tuple[Reason, str] | None = None

    @property
    def effect(self) -> str:
        return Effect.REVISE if self.replaces else Effect.CREATE

    def texts(self) -> list[str]:
        if self.content["type"] == "text":
            return [self.content["text"]]
        return [*self.content["columns"], *(cell for row in self.content["rows"] for cell in row)]

    def map_texts(self, fn) -> None:
        if self.content["type"] == "text":
            self.content = {"type": "text", "text": fn(self.content["text"])}
        else:
            self.content = {
                "type": "table",
                "columns": [fn(c) for c in self.content["columns"]],
                "rows": [[fn(c) for c in row] for row in self.content["rows"]],
            }

    def binding_key(self) -> tuple:
        return (
            tuple(
                sorted(
                    (cited, ref.pk if ref else None, verified)
                    for cited, ref, verified in self.bindings
                )
            ),
            tuple(sorted(b.pk for b in self.dependencies)),
            self.source_hint,
        )


def body_digest(content: dict) -> str:
    return hashlib.sha256(
        json.dumps(content, ensure_ascii=False, sort_keys=True).encode()
    ).hexdigest()


# --- 1. intake ------------------------------------------------------------------


def _intake(run, agent_call, entry, body, replaces) -> Candidate:
    if isinstance(body, dict) and body.get("type") == "table":
        columns = [str(c) for c in body.get("columns", [])]
        rows = [[str(c) for c in row] for row in body.get("rows", [])]
        content = {"type": "table", "columns": columns, "rows": rows}
    else:
        content = {"type": "text", "text": str(body)}
    candidate = Candidate(
        run=run, agent_call=agent_call, entry=entry, content=content, replaces=replaces or ""
    )
    candidate.attempt = PublicationAttempt(
        run=run,
        agent_call=agent_call,
        entry=entry,
        outcome=Outcome.REJECTED,
        replaces=candidate.replaces,
    )
    return candidate


# --- 2. source proof ------------------------------------------------------------


def _prove_sources(candidate: Candidate, access: SourceAccess) -> None:
    markers = parse_markers("\n".join(candidate.texts()))
    refs = {
        ref.pk: ref
        for ref in CitationReference.objects.filter(
            pk__in=[i for i in markers.cited_ids if i.startswith("cite_")]
        ).select_related("version__knowledge", "document__version__knowledge")
    }
    access.prefetch_documents(ref.document for ref in refs.values() if ref.document_id)
    view = set(evidence_call_ids(candidate.agent_call))
    for cited in markers.cited_ids:
        ref = refs.get(cited)
        if ref is None:
            # Forged, empty, truncated, or from nowhere: degrade, keep the body.
            candidate.bindings.append((cited, None, False))
            continue
        in_view = ref.run_id == candidate.run.pk and ref.agent_call_id in view
        if not access.reference_ok(ref):
            # A real source the run may not use (now): refuse this block's effect.
            candidate.rejection = (Reason.SOURCE_NOT_AUTHORIZED, cited)
            return
        candidate.bindings.append((cited, ref, in_view))

    if markers.block_ids:
        blocks = list(AnswerBlock.objects.filter(run=candidate.run, pk__in=markers.block_ids))
        for block in blocks:
            if not block_sources_ok(block, access):
                candidate.rejection = (Reason.DEPENDENCY_NOT_AUTHORIZED, block.pk)
                return
        candidate.dependencies = blocks


# --- 3. degrade ------------------------------------------------------------------


def _degrade(candidate: Candidate, access: SourceAccess) -> None:
    markers = parse_markers("\n".join(candidate.texts()))
    valid: dict[str, str] = {}
    if markers.numeric_handles:
        view = evidence_call_ids(candidate.agent_call)
        for handle in NumericHandle.objects.filter(
            run=candidate.run, agent_call_id__in=view, pk__in=markers.numeric_handles
        ).select_related("fact__document__version__knowledge", "version__knowledge"):
            if access.version_ok(handle.version) and access.document_ok(handle.fact.document):
                valid[handle.pk] = handle.fact.display()

    def render(text: str) -> str:
        # A bad handle becomes an explicit "value unavailable", never a guess.
        return NUM_MARKER.sub(lambda m: valid.get(m.group(1), VALUE_UNAVAILABLE), text)

    candidate.map_texts(render)
    bad_handles = len(set(markers.numeric_handles) - set(valid))
    verified = sum(1 for _, _, ok in candidate.bindings if ok)
    if not candidate.bindings and not bad_handles:
        candidate.source_hint = SourceHint.NONE
    elif verified == len(candidate.bindings) and not bad_handles:
        candidate.source_hint = SourceHint.VERIFIED
    elif verified:
        candidate.source_hint = SourceHint.PARTIAL
    else:
        candidate.source_hint = SourceHint.UNVERIFIED if candidate.bindings else SourceHint.PARTIAL


# --- 4. prepare ------------------------------------------------------------------


def clean_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def truncate_display(text: str, limit: int = MAX_DISPLAY_CHARS) -> tuple[str, bool]:
    """Keep a readable prefix of at most ``limit`` characters (note included).

    Never cuts a marker in half: the cut moves back to the start of any marker
    it would split. Numeric values are already rendered and sit between word
    boundaries, so the cut also backs off a run of digits it lands in.
    """
    if len(text) <= limit:
        return text, False
    cut = limit - len(TRUNCATION_NOTE)
    for marker in ANY_MARKER.finditer(text, max(0, cut - 420), min(len(text), cut + 420)):
        if marker.start() < cut < marker.end():
            cut = marker.start()
            break
    while (
        cut > 0
        and (text[cut - 1].isdigit() or text[cut - 1] in ".,%")
        and cut < len(text)
        and text[cut].isdigit()
    ):
        cut -= 1
    return text[:cut].rstrip() + TRUNCATION_NOTE, True


def _prepare(candidate: Candidate) -> None:
    candidate.map_texts(clean_text)
    if candidate.content["type"] == "text":
        text, candidate.truncated = truncate_display(candidate.content["text"])
        candidate.content = {"type": "text", "text": text}


# --- 5. revision rules -----------------------------------------------------------


def _matches(revision: BlockRevision, candidate: Candidate, digest: str) -> bool:
    if revision.body_digest != digest or revision.source_hint != candidate.source_hint:
        return False
    stored = tuple(sorted((b.cited_id, b.citation_id, b.verified) for b in revision.bindings.all()))
    deps = tuple(sorted(d.depends_on_id for d in revision.dependencies.all()))
    return (stored, deps, revision.source_hint) == candidate.binding_key()


def _find_duplicate(
    candidate: Candidate, target: AnswerBlock | None, digest: str
) -> BlockRevision | None:
    """An exact duplicate: identical body, bindings, dependencies and hint.

    Authorization was re-checked in step 2 for this very candidate, so a revoked
    source makes a byte-identical repeat fail instead of passing as unchanged.
    Whitespace changes alter the digest: they are never duplicates.
    """
    revisions = BlockRevision.objects.filter(
        body_digest=digest, block__run=candidate.run
    ).select_related("block")
    if target is not None:
        revisions = revisions.filter(block=target, revision=target.current_revision)
    else:
        revisions = revisions.filter(block__agent_call=candidate.agent_call)
    for revision in revisions.prefetch_related("bindings", "dependencies"):
        if revision.revision == revision.block.current_revision and _matches(
            revision, candidate, digest
        ):
            return revision
    return None


def _quota_refusal(run_id: str, block: AnswerBlock) -> Reason | None:
    """Quotas, read under the run's lock: 2 modifications per block, 8 per run."""
    used_by_block = PublicationAttempt.objects.filter(block=block, quota_consumed=True).count()
    if used_by_block >= REVISIONS_PER_BLOCK:
        return Reason.BLOCK_REVISION_QUOTA_EXCEEDED
    used_by_run = Run.objects.filter(pk=run_id).values_list("revision_quota_used", flat=True).get()
    if used_by_run >= REVISIONS_PER_RUN:
        return Reason.RUN_REVISION_QUOTA_EXCEEDED
    return None


# --- the pipeline ---------------------------------------------------------------


def _reject(
    candidate: Candidate, reason: Reason, detail: str = "", *, block: AnswerBlock | None = None
) -> Receipt:
    attempt = candidate.attempt
    attempt.outcome = Outcome.REJECTED
    attempt.reason = reason
    attempt.effect = candidate.effect
    attempt.block = block
    attempt.content = candidate.content
    attempt.source_hint = candidate.source_hint
    attempt.cited_ids = [cited for cited, _, _ in candidate.bindings]
    with transaction.atomic():
        attempt.save()
        data = {
            "candidateId": attempt.candidate_id,
            "code": str(reason),
            "effect": str(candidate.effect),
        }
        if block is not None:
            data["publicationId"] = block.pk
        if detail and reason in (Reason.SOURCE_NOT_AUTHORIZED, Reason.DEPENDENCY_NOT_AUTHORIZED):
            # The refused source's ID is the run's own marker text: safe to name.
            data["source"] = detail
        append_event(candidate.run, "answer.rejected", data)
    return Receipt(
        outcome=Outcome.REJECTED,
        candidate_id=attempt.candidate_id,
        publication_id=block.pk if block else None,
        reason=str(reason),
        effect=str(candidate.effect),
        source_hint=candidate.source_hint,
    )


def publish_candidate(
    *,
    run: Run,
    agent_call: AgentCall,
    entry: str,
    body: str | dict,
    replaces: str | None = None,
    preview: bool = True,
) -> Receipt:
    """Publish one candidate (entry "A": assistant text, "B": send_answer_part)."""
    access = SourceAccess(run)
    candidate = _intake(run, agent_call, entry, body, replaces)

    _prove_sources(candidate, access)
    if candidate.rejection:
        _prepare(candidate)
        target = (
            AnswerBlock.objects.filter(run=run, pk=candidate.replaces).first()
            if candidate.replaces
            else None
        )
        return _reject(candidate, *candidate.rejection, block=target)
    _degrade(candidate, access)
    _prepare(candidate)
    if not any(t.strip() for t in candidate.texts()):
        return _reject(candidate, Reason.EMPTY_CANDIDATE)

    digest = body_digest(candidate.content)
    candidate.attempt.body_digest = digest
    target = None
    if candidate.replaces:
        target = AnswerBlock.objects.filter(run=run, pk=candidate.replaces).first()
        if target is None:
            # Never silently a new block, never a deletion of what is committed.
            return _reject(candidate, Reason.REPLACES_TARGET_INVALID)

    duplicate = _find_duplicate(candidate, target, digest)
    if duplicate is not None:
        return _unchanged(candidate, duplicate)

    if target is not None:
        refusal = _consume_quota(candidate, target, preview=preview)
        if refusal:
            return _reject(candidate, refusal, block=target)
    elif preview:
        _preview(candidate, target=None)

    return _commit(candidate, target, digest)


def _unchanged(candidate: Candidate, revision: BlockRevision) -> Receipt:
    """The original receipt is reused: no new revision, event or quota."""
    attempt = candidate.attempt
    attempt.outcome = Outcome.UNCHANGED
    attempt.block = revision.block
    attempt.revision = revision.revision
    attempt.source_hint = candidate.source_hint
    attempt.save()
    return Receipt(
        outcome=Outcome.UNCHANGED,
        candidate_id=attempt.candidate_id,
        publication_id=revision.block_id,
        revision=revision.revision,
        delivery_ordinal=revision.block.delivery_ordinal,
        body_digest=revision.body_digest,
        source_hint=revision.source_hint or SourceHint.UNKNOWN,
        truncated=revision.truncated,
    )


def _preview_event(candidate: Candidate, target: AnswerBlock | None) -> None:
    data = {
        "candidateId": candidate.attempt.candidate_id,
        "revision": (target.current_revision + 1) if target else 1,
    }
    if target is not None:
        data["publicationId"] = target.pk
        data["deliveryOrdinal"] = target.delivery_ordinal
    append_event(candidate.run, "answer.preview", data, locked=True)


def _save_attempt_as_preview(
    candidate: Candidate, *, quota: bool, target: AnswerBlock | None
) -> None:
    attempt = candidate.attempt
    attempt.outcome = Outcome.PREVIEWED
    attempt.effect = candidate.effect
    attempt.block = target
    attempt.quota_consumed = quota
    attempt.content = candidate.content
    attempt.source_hint = candidate.source_hint
    attempt.truncated = candidate.truncated
    attempt.cited_ids = [cited for cited, _, _ in candidate.bindings]
    attempt.save()


def _preview(candidate: Candidate, target: AnswerBlock | None) -> None:
    with transaction.atomic():
        candidate.run.last_seq = (
            Run.objects.select_for_update()
            .values_list("last_seq", flat=True)
            .get(pk=candidate.run.pk)
        )
        _save_attempt_as_preview(candidate, quota=False, target=target)
        _preview_event(candidate, target)


def _consume_quota(candidate: Candidate, target: AnswerBlock, *, preview: bool) -> Reason | None:
    """Reserve one modification of the quotas, under the run's lock.

    A visible preview consumes quota even if its save then fails, so the
    reservation is its own transaction, committed before the write.
    """
    with transaction.atomic():
        run = candidate.run
        run.last_seq = (
            Run.objects.select_for_update().values_list("last_seq", flat=True).get(pk=run.pk)
        )
        refusal = _quota_refusal(run.pk, target)
        if refusal:
            return refusal
        Run.objects.filter(pk=run.pk).update(revision_quota_used=F("revision_quota_used") + 1)
        _save_attempt_as_preview(candidate, quota=True, target=target)
        if preview:
            _preview_event(candidate, target)
    return None


def _commit(candidate: Candidate, target: AnswerBlock | None, digest: str) -> Receipt:
    attempt = candidate.attempt
    reached_commit = False
    try:
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=candidate.run.pk)
            candidate.run.last_seq = run.last_seq
            now = timezone.now()
            if target is None:
                run.block_count += 1
                block = AnswerBlock.objects.create(
                    run=run,
                    agent_call=candidate.agent_call,
                    delivery_ordinal=run.block_count,
                    origin=candidate.entry,
                    current_revision=1,
                    created_at=now,
                )
                Run.objects.filter(pk=run.pk).update(block_count=run.block_count)
            else:
                block = AnswerBlock.objects.select_for_update().get(pk=target.pk)
                block.current_revision += 1
                AnswerBlock.objects.filter(pk=block.pk).update(
                    current_revision=block.current_revision
                )
            attempt.outcome = Outcome.COMMITTED
            attempt.effect = candidate.effect
            attempt.block = block
            attempt.revision = block.current_revision
            attempt.content = candidate.content
            attempt.source_hint = candidate.source_hint
            attempt.truncated = candidate.truncated
            attempt.cited_ids = [cited for cited, _, _ in candidate.bindings]
            attempt.save()
            revision = BlockRevision.objects.create(
                block=block,
                revision=block.current_revision,
                content=candidate.content,
                body_digest=digest,
                source_hint=candidate.source_hint,
                truncated=candidate.truncated,
                committed_at=now,
                attempt=attempt,
            )
            SourceBinding.objects.bulk_create(
                SourceBinding(revision=revision, cited_id=cited, citation=ref, verified=verified)
                for cited, ref, verified in candidate.bindings
            )
            BlockDependency.objects.bulk_create(
                BlockDependency(revision=revision, depends_on=dep) for dep in candidate.dependencies
            )
            append_event(
                candidate.run,
                "answer.published",
                {
                    "publicationId": block.pk,
                    "revision": revision.revision,
                    "deliveryOrdinal": block.delivery_ordinal,
                    "outcome": Outcome.COMMITTED,
                },
                locked=True,
            )
            maybe_fault("during_publication_commit")
            reached_commit = True
    except DatabaseError as exc:
        return _save_failed(candidate, target, unknown=reached_commit, error=exc)
    return Receipt(
        outcome=Outcome.COMMITTED,
        candidate_id=attempt.candidate_id,
        publication_id=block.pk,
        revision=revision.revision,
        delivery_ordinal=block.delivery_ordinal,
        body_digest=digest,
        source_hint=candidate.source_hint,
        truncated=candidate.truncated,
        effect=str(candidate.effect),
    )


def _save_failed(
    candidate: Candidate, target: AnswerBlock | None, *, unknown: bool, error: Exception
) -> Receipt:
    """The write failed. If the COMMIT itself failed its outcome is unknown:
    record SAVE_UNKNOWN and never report it as saved."""
    logger.warning(
        "publication commit failed for %s (unknown=%s): %s", candidate.run.pk, unknown, error
    )
    outcome = Outcome.SAVE_UNKNOWN if unknown else Outcome.REJECTED
    reason = Reason.SAVE_OUTCOME_UNKNOWN if unknown else Reason.SAVE_FAILED
    attempt = candidate.attempt
    try:
        PublicationAttempt.objects.update_or_create(
            candidate_id=attempt.candidate_id,
            defaults={
                "run": candidate.run,
                "agent_call": candidate.agent_call,
                "entry": candidate.entry,
                "outcome": outcome,
                "reason": reason,
                "effect": candidate.effect,
                "block": target,
                "content": candidate.content,
                "quota_consumed": attempt.quota_consumed,
                "replaces": candidate.replaces,
            },
        )
    except DatabaseError:
        logger.warning(
            "could not record the failed attempt %s", attempt.candidate_id, exc_info=True
        )
    return Receipt(
        outcome=outcome,
        candidate_id=attempt.candidate_id,
        publication_id=target.pk if target else None,
        reason=str(reason),
        effect=str(candidate.effect),
    )
