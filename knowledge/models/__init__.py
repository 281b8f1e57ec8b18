"""The knowledge app's models, one module a concern; every name is re-exported here, so
``from knowledge.models import X`` is the one way in.

* ``versions``: a knowledge, its versions (lifecycle, frozen content) and the leases
  that let an app use one — the capability rule (``refusal_of``, ``usable_by``).
* ``content``: a version's documents, chunks and facts, frozen with it.
* ``access``: who may read a document (the document ACL, as a query and for one).
* ``statistics``: a published version's search statistics, built when it is published.
* ``declared_vocabulary``: the vocabulary an operator declared.
"""

from knowledge.models.access import readable_documents, user_may_read_document
from knowledge.models.content import (
    Chunk,
    ChunkQuerySet,
    Document,
    Fact,
    FrozenContentModel,
    FrozenContentQuerySet,
)
from knowledge.models.declared_vocabulary import Vocabulary, declare_vocabulary
from knowledge.models.statistics import (
    VersionCounts,
    VersionIndex,
    VersionTerm,
    build_version_index,
    count_version,
)
from knowledge.models.versions import (
    MAX_REMOTE_TIMEOUT_SECONDS,
    CapabilityRefusal,
    ImmutableVersionError,
    Knowledge,
    KnowledgeVersion,
    KnowledgeVersionQuerySet,
    Lease,
    LeaseQuerySet,
    app_lease_current,
    capability_refusals,
    refusal_of,
    remote_timeout_refusal,
)

__all__ = [
    "MAX_REMOTE_TIMEOUT_SECONDS",
    "CapabilityRefusal",
    "Chunk",
    "ChunkQuerySet",
    "Document",
    "Fact",
    "FrozenContentModel",
    "FrozenContentQuerySet",
    "ImmutableVersionError",
    "Knowledge",
    "KnowledgeVersion",
    "KnowledgeVersionQuerySet",
    "Lease",
    "LeaseQuerySet",
    "VersionCounts",
    "VersionIndex",
    "VersionTerm",
    "Vocabulary",
    "app_lease_current",
    "build_version_index",
    "capability_refusals",
    "count_version",
    "declare_vocabulary",
    "readable_documents",
    "refusal_of",
    "remote_timeout_refusal",
    "user_may_read_document",
]
