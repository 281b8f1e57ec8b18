"""A knowledge, its versions and the leases that let an app use one: the capability
rule (``KnowledgeVersionQuerySet``, ``refusal_of``) and a version's lifecycle
(``KnowledgeVersion.TRANSITIONS``, frozen content once it leaves DRAFT)."""

from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import pgettext_lazy

from foundation.errors import ErrorCode, SparkTideError
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
        allows it). save() refuses with it; the manifest asks it
        (provisioning/writing/knowledge.py)."""
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
        # Here, not at the top: the statistics' rows point at this model.
        from knowledge.models.statistics import build_version_index

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
