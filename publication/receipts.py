"""What Publication says about a candidate: the refusal reasons, the effect it asked
for, its receipt, the body digest a duplicate is recognised by, and the public data of
the events that tell the run's readers what happened (docs/publication.md "Receipts")."""

import hashlib
import json
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from publication.models import BlockRevision, PublicationAttempt, SourceHint

Outcome = PublicationAttempt.Outcome


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


@dataclass(frozen=True)
class Written:
    """What a commit wrote, as its event and its receipt name it."""

    block_id: str
    delivery_ordinal: int
    revision: int
    body_digest: str
    source_hint: str | None
    truncated: bool

    @classmethod
    def of(cls, revision: BlockRevision) -> "Written":
        return cls(
            block_id=revision.block_id,
            delivery_ordinal=revision.block.delivery_ordinal,
            revision=revision.revision,
            body_digest=revision.body_digest,
            source_hint=revision.source_hint,
            truncated=revision.truncated,
        )


def committed_receipt(candidate_id: str, effect: str, written: Written) -> Receipt:
    return Receipt(
        outcome=Outcome.COMMITTED,
        candidate_id=candidate_id,
        publication_id=written.block_id,
        revision=written.revision,
        delivery_ordinal=written.delivery_ordinal,
        body_digest=written.body_digest,
        source_hint=written.source_hint or SourceHint.UNKNOWN,
        truncated=written.truncated,
        effect=str(effect),
    )


def unchanged_receipt(candidate_id: str, effect: str, revision: BlockRevision) -> Receipt:
    """The original receipt, reused: an exact duplicate of a committed revision."""
    return Receipt(
        outcome=Outcome.UNCHANGED,
        candidate_id=candidate_id,
        publication_id=revision.block_id,
        revision=revision.revision,
        delivery_ordinal=revision.block.delivery_ordinal,
        body_digest=revision.body_digest,
        source_hint=revision.source_hint or SourceHint.UNKNOWN,
        truncated=revision.truncated,
        effect=str(effect),
    )


def refusal_data(
    candidate_id: str, reason: str, effect: str, publication_id: str | None
) -> dict[str, Any]:
    """The public data of an event saying a candidate's effect did not happen (a
    refusal, a failed or unknown save, a lost preview settled by recovery)."""
    data: dict[str, Any] = {"candidateId": candidate_id, "code": str(reason), "effect": str(effect)}
    if publication_id:
        data["publicationId"] = publication_id
    return data
