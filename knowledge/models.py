from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import BigIntegerField, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
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
        MANAGED = "MANAGED", pgettext_lazy("knowledge type", "托管")
        INLINE = "INLINE", pgettext_lazy("knowledge type", "内联")
        REMOTE = "REMOTE", pgettext_lazy("knowledge type", "远程")

    tenant = models.ForeignKey(
        Tenant,
        on_delete=models.CASCADE,
        related_name="knowledge",
        verbose_name=pgettext_lazy("field", "租户"),
    )
    key = models.SlugField(max_length=64, verbose_name=pgettext_lazy("field", "标识"))
    name = models.CharField(max_length=200, blank=True, verbose_name=pgettext_lazy("field", "名称"))
    type = models.CharField(
        max_length=8, choices=Type.choices, verbose_name=pgettext_lazy("field", "类型")
    )

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


class KnowledgeVersionQuerySet(models.QuerySet["KnowledgeVersion"]):
    """The capability to use a version — the one home of the rule.

    An app may use a knowledge version now when (in this order) the version is
    PUBLISHED, the app holds a current lease on it (not expired, not revoked),
    and the version's knowledge belongs to the app's tenant. Retrieval searches
    only ``usable_by(app)``; source proof and preview ask ``capability_refusals``
    for the reason, read in the same one query.
    """

    def with_capability(self, app: App, now: datetime | None = None) -> Any:
        # Any: this queryset with ``app_lease_current`` annotated, which its type cannot say.
        return self.annotate(app_lease_current=app_lease_current(app, OuterRef("pk"), now))

    def usable_by(self, app: App, now: datetime | None = None) -> "KnowledgeVersionQuerySet":
        usable: KnowledgeVersionQuerySet = self.with_capability(app, now).filter(
            status=KnowledgeVersion.Status.PUBLISHED,
            app_lease_current=True,
            knowledge__tenant_id=app.tenant_id,
        )
        return usable


def capability_refusals(
    app: App, versions: Iterable[Any], now: datetime | None = None
) -> dict[int, CapabilityRefusal | None]:
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


def app_lease_current(app: App, version: Any, now: datetime | None = None) -> Exists:
    """``Exists`` of the app's current lease on ``version`` (a pk or an ``OuterRef``),
    so a query of references can read the capability in the same statement."""
    return Exists(Lease.objects.current(now).filter(app_id=app.pk, version_id=version))


def refusal_of(
    app: App, status: str | None, tenant_id: int | None, leased: bool
) -> CapabilityRefusal | None:
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


def remote_timeout_refusal(seconds: float) -> str | None:
    """Why a version's own deadline cannot be ``seconds`` (None: it can): the rule of the
    column's constraint (``knowledgeversion_timeout_at_most_15s``) in words, for whoever
    asks before writing — the admin's form (``clean``) and the manifest."""
    if 0 < seconds <= MAX_REMOTE_TIMEOUT_SECONDS:
        return None
    return f"must be more than 0 and at most {MAX_REMOTE_TIMEOUT_SECONDS} seconds, got {seconds:g}"


class KnowledgeVersion(models.Model):
    class Status(models.TextChoices):
        DRAFT = "DRAFT", pgettext_lazy("version status", "草稿")
        PUBLISHED = "PUBLISHED", pgettext_lazy("version status", "已发布")
        REVOKED = "REVOKED", pgettext_lazy("version status", "已撤销")

    # Fields that make up a version's content; frozen once it leaves DRAFT.
    CONTENT_FIELDS = ("knowledge_id", "version", "endpoint", "secret", "timeout_seconds")
    # The statuses a version may take from each status: a revoked version stays revoked,
    # a published one never goes back to DRAFT. save() enforces it; the manifest asks it.
    TRANSITIONS: dict[str, set[str]] = {
        Status.DRAFT: {Status.DRAFT, Status.PUBLISHED, Status.REVOKED},
        Status.PUBLISHED: {Status.PUBLISHED, Status.REVOKED},
        Status.REVOKED: {Status.REVOKED},
    }

    knowledge = models.ForeignKey(
        Knowledge,
        on_delete=models.CASCADE,
        related_name="versions",
        verbose_name=pgettext_lazy("field", "知识库"),
    )
    version = models.CharField(max_length=64, verbose_name=pgettext_lazy("field", "版本"))
    status = models.CharField(
        max_length=10,
        choices=Status.choices,
        default=Status.DRAFT,
        verbose_name=pgettext_lazy("field", "状态"),
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )
    published_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "发布时间")
    )
    revoked_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "撤销时间")
    )
    # REMOTE only
    endpoint = models.URLField(
        max_length=500, blank=True, verbose_name=pgettext_lazy("field", "远程端点")
    )
    secret = models.CharField(
        max_length=200, blank=True, verbose_name=pgettext_lazy("field", "签名密钥")
    )
    timeout_seconds = models.FloatField(
        default=float(MAX_REMOTE_TIMEOUT_SECONDS), verbose_name=pgettext_lazy("field", "超时（秒）")
    )

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

    @classmethod
    def transition_refusal(cls, before: str, after: str) -> str | None:
        """Why a version cannot go from ``before`` to ``after`` (None: ``TRANSITIONS``
        allows it). save() refuses with it; the manifest (provisioning/writing.py) asks it."""
        if after in cls.TRANSITIONS[before]:
            return None
        if before == cls.Status.REVOKED:
            return "a revoked version stays revoked; publish a new version"
        return "a published version cannot go back to DRAFT; publish a new version"

    def clean(self) -> None:
        if self.timeout_seconds is not None:
            refusal = remote_timeout_refusal(self.timeout_seconds)
            if refusal is not None:
                raise ValidationError({"timeout_seconds": refusal})
        if self.knowledge.type == Knowledge.Type.REMOTE:
            if not self.endpoint:
                raise ValidationError({"endpoint": "A REMOTE version needs an endpoint."})
            if not self.secret:
                raise ValidationError({"secret": "A REMOTE version needs a signing secret."})

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            stored = (
                type(self).objects.filter(pk=self.pk).values(*self.CONTENT_FIELDS, "status").first()
            )
            if stored is not None:
                refusal = self.transition_refusal(stored["status"], self.status)
                if refusal is not None:
                    raise ImmutableVersionError(f"{self}: {refusal}")
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

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        if self.is_frozen:
            raise ImmutableVersionError(f"{self} is {self.status}; it cannot be deleted.")
        return super().delete(*args, **kwargs)


class FrozenContentQuerySet[M: models.Model](models.QuerySet[M]):
    """Bulk updates and deletes bypass save(); refuse them on frozen versions."""

    version_path = "version"

    def _frozen(self) -> "FrozenContentQuerySet[M]":
        return self.exclude(**{f"{self.version_path}__status": KnowledgeVersion.Status.DRAFT})

    def update(self, **kwargs: Any) -> int:
        allowed = getattr(self.model, "MUTABLE_FIELDS", ())
        if set(kwargs) - set(allowed) and self._frozen().exists():
            raise ImmutableVersionError(
                f"{self.model.__name__} rows of a published version cannot change."
            )
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        if self._frozen().exists():
            raise ImmutableVersionError(
                f"{self.model.__name__} rows of a published version cannot be deleted."
            )
        return super().delete()


class ChunkQuerySet[M: models.Model](FrozenContentQuerySet[M]):
    version_path = "document__version"


class FrozenContentModel(models.Model):
    """Content that belongs to a version: writable only while it is a DRAFT."""

    MUTABLE_FIELDS: tuple[str, ...] = ()

    class Meta:
        abstract = True

    def owning_version(self) -> KnowledgeVersion:
        raise NotImplementedError

    def _guard(self, update_fields: Iterable[str] | None = None) -> None:
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

    def save(self, *args: Any, **kwargs: Any) -> None:
        self._guard(kwargs.get("update_fields"))
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        self._guard()
        return super().delete(*args, **kwargs)


class Document(FrozenContentModel):
    # The ACL is permission, not content: it may change on a published version.
    MUTABLE_FIELDS = ("restricted",)

    version = models.ForeignKey(
        KnowledgeVersion,
        on_delete=models.CASCADE,
        related_name="documents",
        verbose_name=pgettext_lazy("field", "版本"),
    )
    key = models.CharField(max_length=128, verbose_name=pgettext_lazy("field", "标识"))
    title = models.CharField(max_length=500, verbose_name=pgettext_lazy("field", "标题"))
    source_version = models.CharField(
        max_length=128, blank=True, verbose_name=pgettext_lazy("field", "原文版本")
    )
    text = models.TextField(
        help_text=_("全文：各页之间以空行连接。"), verbose_name=pgettext_lazy("field", "文本")
    )
    page_count = models.PositiveIntegerField(default=1, verbose_name=pgettext_lazy("field", "页数"))
    # False: every user of the tenant may read it. True: only users holding the
    # guardian object permission ``knowledge.read_document``.
    restricted = models.BooleanField(default=False, verbose_name=pgettext_lazy("field", "受限"))

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
    document = models.ForeignKey(
        Document,
        on_delete=models.CASCADE,
        related_name="chunks",
        verbose_name=pgettext_lazy("field", "文档"),
    )
    ordinal = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "序号"))
    page = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "页码"))
    paragraph = models.PositiveIntegerField(
        default=1,
        help_text=_("片段开始处在其所在页中的段落序号（按非空行计，从 1 开始）"),
        verbose_name=pgettext_lazy("field", "段落"),
    )
    start = models.PositiveIntegerField(
        help_text=_("在文档全文中的 UTF-16 位置"), verbose_name=pgettext_lazy("field", "起始位置")
    )
    end = models.PositiveIntegerField(
        help_text=_("在文档全文中的 UTF-16 位置（不含该位置）"),
        verbose_name=pgettext_lazy("field", "结束位置"),
    )
    text = models.TextField(verbose_name=pgettext_lazy("field", "文本"))
    digest = models.CharField(max_length=64, verbose_name=pgettext_lazy("field", "摘要值"))
    search_text = models.TextField(
        help_text=_("以空格连接的检索词（中日韩文字二元组、ASCII 单词）"),
        verbose_name=pgettext_lazy("field", "检索文本"),
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

    def __str__(self) -> str:
        return f"{self.document_id}/{self.ordinal}"

    def owning_version(self) -> KnowledgeVersion:
        return self.document.version

    @property
    def locator(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end}


class Fact(FrozenContentModel):
    """A numeric fact a document declares; retrieval hands out num_ handles for it."""

    document = models.ForeignKey(
        Document,
        on_delete=models.CASCADE,
        related_name="facts",
        verbose_name=pgettext_lazy("field", "文档"),
    )
    # The chunk whose text states the value: its citation is the only one a handle gets.
    # NULL only for facts stored before anchoring that no chunk states: never handed out.
    chunk = models.ForeignKey(
        Chunk,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="facts",
        verbose_name=pgettext_lazy("field", "文本片段"),
    )
    key = models.CharField(max_length=128, verbose_name=pgettext_lazy("field", "标识"))
    value = models.DecimalField(
        max_digits=30, decimal_places=10, verbose_name=pgettext_lazy("field", "数值")
    )
    unit = models.CharField(max_length=32, blank=True, verbose_name=pgettext_lazy("field", "单位"))
    as_of = models.DateField(null=True, blank=True, verbose_name=pgettext_lazy("field", "截至日期"))
    label = models.CharField(
        max_length=200,
        blank=True,
        help_text=_("给人阅读的名称；为空时显示标识"),
        verbose_name=pgettext_lazy("field", "显示名称"),
    )

    objects = ChunkQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "事实")
        verbose_name_plural = pgettext_lazy("models", "事实")
        constraints = [models.UniqueConstraint(fields=["document", "key"], name="fact_unique_key")]

    def __str__(self) -> str:
        return self.key

    def owning_version(self) -> KnowledgeVersion:
        return self.document.version

    def display(self) -> str:
        value = format(self.value.normalize(), "f")
        return f"{value}{self.unit}"


class LeaseQuerySet(models.QuerySet["Lease"]):
    def current(self, now: datetime | None = None) -> "LeaseQuerySet":
        now = now or timezone.now()
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)
        )


class Lease(models.Model):
    """An app's right to use one exact knowledge version."""

    app = models.ForeignKey(
        App,
        on_delete=models.CASCADE,
        related_name="leases",
        verbose_name=pgettext_lazy("field", "应用"),
    )
    version = models.ForeignKey(
        KnowledgeVersion,
        on_delete=models.CASCADE,
        related_name="leases",
        verbose_name=pgettext_lazy("field", "版本"),
    )
    expires_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "过期时间")
    )
    revoked_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "撤销时间")
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )

    objects = LeaseQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "访问租约")
        verbose_name_plural = pgettext_lazy("models", "访问租约")
        constraints = [
            models.UniqueConstraint(fields=["app", "version"], name="lease_unique_app_version")
        ]

    def __str__(self) -> str:
        return f"{self.app} → {self.version}"


def readable_documents(
    owner: User | AnonymousUser | None, versions: Iterable[KnowledgeVersion]
) -> QuerySet[Document]:
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


def user_may_read_document(
    user: User | AnonymousUser, document: Document, *, checker: Any = None
) -> bool:
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
        return bool(checker.has_perm("read_document", document))
    return bool(user.has_perm("knowledge.read_document", document))


class VersionIndex(models.Model):
    """A published version's search statistics, computed once when it is published
    (``knowledge.statistics.build_version_index``) and never changed: its chunks,
    their total length in search tokens, and the entity aliases of its titles."""

    version = models.OneToOneField(
        KnowledgeVersion,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="index",
        verbose_name=pgettext_lazy("field", "版本"),
    )
    chunk_count = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "片段数"))
    token_count = models.PositiveBigIntegerField(verbose_name=pgettext_lazy("field", "词元数"))
    entities = models.JSONField(
        default=dict, blank=True, verbose_name=pgettext_lazy("field", "实体")
    )
    built_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "构建时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "版本检索统计")
        verbose_name_plural = pgettext_lazy("models", "版本检索统计")

    def __str__(self) -> str:
        return str(self.version_id)


class VersionTerm(models.Model):
    """How many chunks of a version hold a search token (its document frequency), and
    the most it weighs in one of them (``knowledge.ranking.term_impacts``)."""

    version = models.ForeignKey(
        KnowledgeVersion,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=pgettext_lazy("field", "版本"),
    )
    token = models.CharField(max_length=64, verbose_name=pgettext_lazy("field", "检索词"))
    chunks = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "含该词的片段数"))
    # max over the version's chunks of tf / (tf + k1·(1 − b + b·len/avglen)), avglen the
    # version's own; null (stored before it existed): unknown, the bound is then 1.
    impact = models.FloatField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "单片段最大权重")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "版本检索词频")
        verbose_name_plural = pgettext_lazy("models", "版本检索词频")
        constraints = [
            models.UniqueConstraint(fields=["version", "token"], name="versionterm_unique_token")
        ]

    def __str__(self) -> str:
        return f"{self.version_id}/{self.token}"


class Vocabulary(models.Model):
    """Vocabulary an operator declared (manifest ``vocabulary:``, ``ingest --vocabulary``):
    tenant-wide when ``knowledge`` is null, else for that knowledge. ``entries`` is
    ``{term: [expansion, …]}`` as ``knowledge.vocabulary.validate_entries`` accepted it."""

    tenant = models.ForeignKey(
        Tenant,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=pgettext_lazy("field", "租户"),
    )
    knowledge = models.OneToOneField(
        Knowledge,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="vocabulary",
        verbose_name=pgettext_lazy("field", "知识库"),
    )
    entries = models.JSONField(default=dict, verbose_name=pgettext_lazy("field", "词条"))

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

    def __str__(self) -> str:
        return f"{self.tenant_id}/{self.knowledge_id or '—'}"


def declare_vocabulary(
    tenant: Tenant, knowledge: Knowledge | None, entries: dict[str, Any]
) -> bool:
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
