from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import BigIntegerField, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.translation import pgettext_lazy
from guardian.utils import get_group_obj_perms_model, get_user_obj_perms_model

from foundation.errors import ErrorCode, SparkTideError
from knowledge.text import MAX_TOKEN_CHARS
from knowledge.vocabulary import entity_aliases
from tenancy.models import App, Tenant


class ImmutableVersionError(SparkTideError):
    def __init__(self, detail: str) -> None:
        super().__init__(ErrorCode.IMMUTABLE_VERSION, 409, detail)


class Knowledge(models.Model):
    class Type(models.TextChoices):
        MANAGED = "MANAGED"
        INLINE = "INLINE"
        REMOTE = "REMOTE"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="knowledge")
    key = models.SlugField(max_length=64)
    name = models.CharField(max_length=200, blank=True)
    type = models.CharField(max_length=8, choices=Type.choices)

    class Meta:
        verbose_name = pgettext_lazy("model", "知识库")
        verbose_name_plural = pgettext_lazy("models", "知识库")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="knowledge_unique_tenant_key")
        ]

    def __str__(self) -> str:
        return f"{self.tenant.key}/{self.key}"


class CapabilityRefusal(StrEnum):
    """Why an app may not use a knowledge version now (first failing check wins)."""

    NOT_PUBLISHED = "not_published"
    NO_CURRENT_LEASE = "no_current_lease"
    OTHER_TENANT = "other_tenant"


class KnowledgeVersionQuerySet(models.QuerySet):
    """The capability to use a version — the one home of the rule.

    An app may use a knowledge version now when (in this order) the version is
    PUBLISHED, the app holds a current lease on it (not expired, not revoked),
    and the version's knowledge belongs to the app's tenant. Retrieval searches
    only ``usable_by(app)``; source proof and preview ask ``capability_refusals``
    for the reason, read in the same one query.
    """

    def with_capability(self, app, now=None):
        return self.annotate(app_lease_current=app_lease_current(app, OuterRef("pk"), now))

    def usable_by(self, app, now=None):
        return self.with_capability(app, now).filter(
            status=KnowledgeVersion.Status.PUBLISHED,
            app_lease_current=True,
            knowledge__tenant_id=app.tenant_id,
        )


def capability_refusals(app, versions: Iterable, now=None) -> dict[int, CapabilityRefusal | None]:
    """For each version (instance or pk): None if ``app`` may use it now, else why not.

    One query whatever the number of versions; status and tenant are read from the
    database, not from the instances given.
    """
    pks = {getattr(v, "pk", v) for v in versions}
    if not pks:
        return {}
    rows = {
        pk: (status, tenant_id, leased)
        for pk, status, tenant_id, leased in KnowledgeVersion.objects.filter(pk__in=pks)
        .with_capability(app, now)
        .values_list("pk", "status", "knowledge__tenant_id", "app_lease_current")
    }
    return {pk: refusal_of(app, *rows.get(pk, (None, None, False))) for pk in pks}


def app_lease_current(app, version, now=None) -> Exists:
    """``Exists`` of the app's current lease on ``version`` (a pk or an ``OuterRef``),
    so a query of references can read the capability in the same statement."""
    return Exists(Lease.objects.current(now).filter(app_id=app.pk, version_id=version))


def refusal_of(app, status, tenant_id, leased: bool) -> CapabilityRefusal | None:
    """The capability rule on what one query read: the version's status, its
    knowledge's tenant and ``app_lease_current`` (first failing check wins)."""
    if status != KnowledgeVersion.Status.PUBLISHED:
        return CapabilityRefusal.NOT_PUBLISHED
    if not leased:
        return CapabilityRefusal.NO_CURRENT_LEASE
    if tenant_id != app.tenant_id:
        return CapabilityRefusal.OTHER_TENANT
    return None


# A REMOTE version's own deadline is at most this (the column's constraint); the
# deployment's SPARKTIDE_REMOTE_TIMEOUT_CAP can only lower it (knowledge/remote.py).
MAX_REMOTE_TIMEOUT_SECONDS = 15


class KnowledgeVersion(models.Model):
    class Status(models.TextChoices):
        DRAFT = "DRAFT"
        PUBLISHED = "PUBLISHED"
        REVOKED = "REVOKED"

    # Fields that make up a version's content; frozen once it leaves DRAFT.
    CONTENT_FIELDS = ("knowledge_id", "version", "endpoint", "secret", "timeout_seconds")
    # The statuses a version may take from each status: a revoked version stays revoked,
    # a published one never goes back to DRAFT. save() enforces it; the manifest asks it.
    TRANSITIONS: dict[str, set[str]] = {
        Status.DRAFT: {Status.DRAFT, Status.PUBLISHED, Status.REVOKED},
        Status.PUBLISHED: {Status.PUBLISHED, Status.REVOKED},
        Status.REVOKED: {Status.REVOKED},
    }

    knowledge = models.ForeignKey(Knowledge, on_delete=models.CASCADE, related_name="versions")
    version = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    created_at = models.DateTimeField(default=timezone.now)
    published_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # REMOTE only
    endpoint = models.URLField(max_length=500, blank=True)
    secret = models.CharField(max_length=200, blank=True)
    timeout_seconds = models.FloatField(default=float(MAX_REMOTE_TIMEOUT_SECONDS))

    objects = KnowledgeVersionQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "知识库版本")
        verbose_name_plural = pgettext_lazy("models", "知识库版本")
        constraints = [
            models.UniqueConstraint(
                fields=["knowledge", "version"], name="knowledgeversion_unique_version"
            ),
            models.CheckConstraint(
                condition=models.Q(
                    timeout_seconds__gt=0, timeout_seconds__lte=MAX_REMOTE_TIMEOUT_SECONDS
                ),
                name="knowledgeversion_timeout_at_most_15s",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.knowledge.key}@{self.version}"

    @property
    def label(self) -> str:
        return f"{self.knowledge.key}@{self.version}"

    @property
    def is_frozen(self) -> bool:
        return self.status != self.Status.DRAFT

    def clean(self) -> None:
        if self.knowledge.type == Knowledge.Type.REMOTE:
            if not self.endpoint:
                raise ValidationError({"endpoint": "A REMOTE version needs an endpoint."})
            if not self.secret:
                raise ValidationError({"secret": "A REMOTE version needs a signing secret."})

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            stored = (
                type(self).objects.filter(pk=self.pk).values(*self.CONTENT_FIELDS, "status").first()
            )
            if stored is not None:
                if self.status not in self.TRANSITIONS[stored["status"]]:
                    raise ImmutableVersionError(
                        f"{self}: status cannot go from {stored['status']} to {self.status}."
                    )
                if stored["status"] != self.Status.DRAFT:
                    changed = [f for f in self.CONTENT_FIELDS if getattr(self, f) != stored[f]]
                    if changed:
                        raise ImmutableVersionError(
                            f"{self} is {stored['status']}; its content cannot change ({', '.join(changed)})."
                        )
        if self.status == self.Status.PUBLISHED and self.published_at is None:
            self.published_at = timezone.now()
        if self.status == self.Status.REVOKED and self.revoked_at is None:
            self.revoked_at = timezone.now()
        publishing = self.status == self.Status.PUBLISHED and not self._stored_published()
        with transaction.atomic():
            super().save(*args, **kwargs)
            if publishing:
                # In the publishing transaction: a search sees the version PUBLISHED
                # with its complete statistics, or not PUBLISHED at all.
                build_version_index(self)

    def _stored_published(self) -> bool:
        return (
            self.pk is not None
            and type(self).objects.filter(pk=self.pk, status=self.Status.PUBLISHED).exists()
        )

    def delete(self, *args, **kwargs):
        if self.is_frozen:
            raise ImmutableVersionError(f"{self} is {self.status}; it cannot be deleted.")
        return super().delete(*args, **kwargs)


class FrozenContentQuerySet(models.QuerySet):
    """Bulk updates and deletes bypass save(); refuse them on frozen versions."""

    version_path = "version"

    def _frozen(self):
        return self.exclude(**{f"{self.version_path}__status": KnowledgeVersion.Status.DRAFT})

    def update(self, **kwargs):
        allowed = getattr(self.model, "MUTABLE_FIELDS", ())
        if set(kwargs) - set(allowed) and self._frozen().exists():
            raise ImmutableVersionError(
                f"{self.model.__name__} rows of a published version cannot change."
            )
        return super().update(**kwargs)

    def delete(self):
        if self._frozen().exists():
            raise ImmutableVersionError(
                f"{self.model.__name__} rows of a published version cannot be deleted."
            )
        return super().delete()


class ChunkQuerySet(FrozenContentQuerySet):
    version_path = "document__version"


class FrozenContentModel(models.Model):
    """Content that belongs to a version: writable only while it is a DRAFT."""

    MUTABLE_FIELDS: tuple[str, ...] = ()

    class Meta:
        abstract = True

    def owning_version(self) -> KnowledgeVersion:
        raise NotImplementedError

    def _guard(self, update_fields=None) -> None:
        version = self.owning_version()
        if update_fields is not None and set(update_fields) <= set(self.MUTABLE_FIELDS):
            return
        if (
            KnowledgeVersion.objects.filter(pk=version.pk)
            .exclude(status=KnowledgeVersion.Status.DRAFT)
            .exists()
        ):
            raise ImmutableVersionError(
                f"{version} is not a DRAFT; its {type(self).__name__} rows cannot change."
            )

    def save(self, *args, **kwargs) -> None:
        self._guard(kwargs.get("update_fields"))
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        self._guard()
        return super().delete(*args, **kwargs)


class Document(FrozenContentModel):
    # The ACL is permission, not content: it may change on a published version.
    MUTABLE_FIELDS = ("restricted",)

    version = models.ForeignKey(
        KnowledgeVersion, on_delete=models.CASCADE, related_name="documents"
    )
    key = models.CharField(max_length=128)
    title = models.CharField(max_length=500)
    source_version = models.CharField(max_length=128, blank=True)
    text = models.TextField(help_text="Full text: pages joined by a blank line.")
    page_count = models.PositiveIntegerField(default=1)
    # False: every user of the tenant may read it. True: only users holding the
    # guardian object permission ``knowledge.read_document``.
    restricted = models.BooleanField(default=False)

    objects = FrozenContentQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "文档")
        verbose_name_plural = pgettext_lazy("models", "文档")
        permissions = [("read_document", "May read the document's excerpts")]
        constraints = [
            models.UniqueConstraint(fields=["version", "key"], name="document_unique_version_key")
        ]

    def __str__(self) -> str:
        return self.title

    def owning_version(self) -> KnowledgeVersion:
        return self.version


class Chunk(FrozenContentModel):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    page = models.PositiveIntegerField()
    paragraph = models.PositiveIntegerField(
        default=1, help_text="1-based paragraph (non-blank line) of its page where it begins"
    )
    start = models.PositiveIntegerField(help_text="UTF-16 offset in the document text")
    end = models.PositiveIntegerField(help_text="UTF-16 offset in the document text (exclusive)")
    text = models.TextField()
    digest = models.CharField(max_length=64)
    search_text = models.TextField(
        help_text="Space-joined search tokens (CJK bigrams, ASCII words)"
    )

    objects = ChunkQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "文本片段")
        verbose_name_plural = pgettext_lazy("models", "文本片段")
        ordering = ["document_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="chunk_unique_ordinal")
        ]
        # The GIN index over to_tsvector('simple', search_text) is PostgreSQL-only and
        # created by migration 0002; SQLite takes the portable path in retrieval.

    def owning_version(self) -> KnowledgeVersion:
        return self.document.version

    @property
    def locator(self) -> dict:
        return {"start": self.start, "end": self.end}


class Fact(FrozenContentModel):
    """A numeric fact a document declares; retrieval hands out num_ handles for it."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="facts")
    # The chunk whose text states the value: its citation is the only one a handle gets.
    # NULL only for facts stored before anchoring that no chunk states: never handed out.
    chunk = models.ForeignKey(
        Chunk, null=True, blank=True, on_delete=models.CASCADE, related_name="facts"
    )
    key = models.CharField(max_length=128)
    value = models.DecimalField(max_digits=30, decimal_places=10)
    unit = models.CharField(max_length=32, blank=True)
    as_of = models.DateField(null=True, blank=True)
    label = models.CharField(
        max_length=200, blank=True, help_text="How a person reads it; the key if empty"
    )

    objects = ChunkQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "事实")
        verbose_name_plural = pgettext_lazy("models", "事实")
        constraints = [models.UniqueConstraint(fields=["document", "key"], name="fact_unique_key")]

    def owning_version(self) -> KnowledgeVersion:
        return self.document.version

    def display(self) -> str:
        value = format(self.value.normalize(), "f")
        return f"{value}{self.unit}"


class LeaseQuerySet(models.QuerySet):
    def current(self, now=None):
        now = now or timezone.now()
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)
        )


class Lease(models.Model):
    """An app's right to use one exact knowledge version."""

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="leases")
    version = models.ForeignKey(KnowledgeVersion, on_delete=models.CASCADE, related_name="leases")
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = LeaseQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "访问租约")
        verbose_name_plural = pgettext_lazy("models", "访问租约")
        constraints = [
            models.UniqueConstraint(fields=["app", "version"], name="lease_unique_app_version")
        ]

    def __str__(self) -> str:
        return f"{self.app} → {self.version}"


def readable_documents(owner, versions: Iterable[KnowledgeVersion]) -> QuerySet[Document]:
    """Documents of the given versions the owner may read, as one lazy query: the
    document ACL as a query (retrieval), beside ``user_may_read_document``, the same
    rule for one document (source proof, preview). An inactive user reads nothing;
    the document must belong to the owner's tenant; unrestricted documents are
    readable by every user of it, restricted ones need ``knowledge.read_document`` on
    the document, held by the user or one of their groups — or a superuser, as
    Django's has_perm grants.
    """
    if owner is None or owner.pk is None or not owner.is_active:
        return Document.objects.none()
    documents = Document.objects.filter(
        version__in=[version.pk for version in versions],
        version__knowledge__tenant__users__user_id=owner.pk,
    )
    if owner.is_superuser:
        return documents
    permission = {
        "permission__codename": "read_document",
        "permission__content_type__app_label": "knowledge",
        "content_type__app_label": "knowledge",
        "content_type__model": "document",
    }
    # guardian stores object_pk as text; cast it (as guardian does) rather than
    # casting every document id.
    by_user = (
        get_user_obj_perms_model()
        ._default_manager.filter(user_id=owner.pk, **permission)
        .annotate(document_id=Cast("object_pk", BigIntegerField()))
        .values("document_id")
    )
    by_group = (
        get_group_obj_perms_model()
        ._default_manager.filter(group__user=owner.pk, **permission)
        .annotate(document_id=Cast("object_pk", BigIntegerField()))
        .values("document_id")
    )
    return documents.filter(Q(restricted=False) | Q(pk__in=by_user) | Q(pk__in=by_group))


def user_may_read_document(user, document: Document, *, checker=None) -> bool:
    """The owner's current right to read a document (tenant + ACL); the same rule
    as ``readable_documents`` (tests/knowledge/test_document_acl.py holds them equal).

    ``checker`` is a guardian ObjectPermissionChecker with prefetched perms, so
    callers deciding many documents do it in a bounded number of queries.
    """
    if not user.is_active:
        return False
    tenant_user = getattr(user, "tenant_user", None)
    if tenant_user is None or tenant_user.tenant_id != document.version.knowledge.tenant_id:
        return False
    if not document.restricted:
        return True
    if checker is not None:
        return checker.has_perm("read_document", document)
    return user.has_perm("knowledge.read_document", document)


class VersionIndex(models.Model):
    """A published version's search statistics, computed once when it is published
    (``knowledge.statistics.build_version_index``) and never changed: its chunks,
    their total length in search tokens, and the entity aliases of its titles."""

    version = models.OneToOneField(
        KnowledgeVersion, on_delete=models.CASCADE, primary_key=True, related_name="index"
    )
    chunk_count = models.PositiveIntegerField()
    token_count = models.PositiveBigIntegerField()
    entities = models.JSONField(default=dict, blank=True)
    built_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = pgettext_lazy("model", "版本检索统计")
        verbose_name_plural = pgettext_lazy("models", "版本检索统计")


class VersionTerm(models.Model):
    """How many chunks of a version hold a search token (its document frequency), and
    the most it weighs in one of them (``knowledge.ranking.term_impacts``)."""

    version = models.ForeignKey(KnowledgeVersion, on_delete=models.CASCADE, related_name="+")
    token = models.CharField(max_length=64)
    chunks = models.PositiveIntegerField()
    # max over the version's chunks of tf / (tf + k1·(1 − b + b·len/avglen)), avglen the
    # version's own; null (stored before it existed): unknown, the bound is then 1.
    impact = models.FloatField(null=True, blank=True)

    class Meta:
        verbose_name = pgettext_lazy("model", "版本检索词频")
        verbose_name_plural = pgettext_lazy("models", "版本检索词频")
        constraints = [
            models.UniqueConstraint(fields=["version", "token"], name="versionterm_unique_token")
        ]


class Vocabulary(models.Model):
    """Vocabulary an operator declared (manifest ``vocabulary:``, ``ingest --vocabulary``):
    tenant-wide when ``knowledge`` is null, else for that knowledge. ``entries`` is
    ``{term: [expansion, …]}`` as ``knowledge.vocabulary.validate_entries`` accepted it."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    knowledge = models.OneToOneField(
        Knowledge, on_delete=models.CASCADE, null=True, blank=True, related_name="vocabulary"
    )
    entries = models.JSONField(default=dict)

    class Meta:
        verbose_name = pgettext_lazy("model", "领域词表")
        verbose_name_plural = pgettext_lazy("models", "领域词表")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant"],
                condition=models.Q(knowledge__isnull=True),
                name="vocabulary_one_tenant_wide",
            )
        ]


def declare_vocabulary(tenant: Tenant, knowledge: Knowledge | None, entries: dict) -> bool:
    """Store validated entries (``knowledge.vocabulary.validate_entries(...).entries()``)
    as the tenant's (knowledge None) or one knowledge's, replacing what was declared;
    True if anything changed. It applies from the next search; no statistics change."""
    current = Vocabulary.objects.filter(tenant=tenant, knowledge=knowledge).first()
    if current is not None and current.entries == entries:
        return False
    Vocabulary.objects.update_or_create(
        tenant=tenant, knowledge=knowledge, defaults={"entries": entries}
    )
    return True


@dataclass(frozen=True)
class VersionCounts:
    chunk_count: int
    token_count: int
    frequencies: Counter[str]
    titles: list[str]


def count_version(version: KnowledgeVersion) -> VersionCounts:
    """A version's search statistics, read from its chunks (nothing written)."""
    frequencies: Counter[str] = Counter()
    chunk_count = token_count = 0
    rows = Chunk.objects.filter(document__version=version).values_list("search_text", flat=True)
    for search_text in rows.iterator(chunk_size=2000):
        tokens = search_text.split()
        chunk_count += 1
        token_count += len(tokens)
        frequencies.update(t for t in set(tokens) if len(t) <= MAX_TOKEN_CHARS)
    titles = list(version.documents.values_list("title", flat=True))
    return VersionCounts(chunk_count, token_count, frequencies, titles)


def build_version_index(version: KnowledgeVersion) -> bool:
    """Compute and store ``version``'s statistics; False if they were already stored
    (they never change: a published version's chunks cannot). REMOTE versions have none."""
    if version.knowledge.type == Knowledge.Type.REMOTE:
        return False
    if VersionIndex.objects.filter(version=version).exists():
        return False
    from knowledge.ranking import term_impacts

    counts = count_version(version)
    impacts = term_impacts(version, counts)
    VersionTerm.objects.bulk_create(
        (
            VersionTerm(version=version, token=t, chunks=n, impact=impacts.get(t))
            for t, n in counts.frequencies.items()
        ),
        batch_size=5000,
    )
    VersionIndex.objects.create(
        version=version,
        chunk_count=counts.chunk_count,
        token_count=counts.token_count,
        entities=entity_aliases(counts.titles).entries(),
    )
    return True
