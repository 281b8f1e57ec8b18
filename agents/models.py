from typing import Any

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from knowledge.models import ImmutableVersionError, KnowledgeVersion
from tenancy.models import App, Tenant


class Agent(models.Model):
    tenant = models.ForeignKey(
        Tenant,
        on_delete=models.CASCADE,
        related_name="agents",
        verbose_name=pgettext_lazy("field", "租户"),
    )
    key = models.SlugField(max_length=64, verbose_name=pgettext_lazy("field", "标识"))
    name = models.CharField(max_length=200, blank=True, verbose_name=pgettext_lazy("field", "名称"))

    class Meta:
        verbose_name = pgettext_lazy("model", "智能体")
        verbose_name_plural = pgettext_lazy("models", "智能体")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="agent_unique_tenant_key")
        ]

    def __str__(self) -> str:
        return f"{self.tenant.key}/{self.key}"


class AgentVersion(models.Model):
    class Status(models.TextChoices):
        DRAFT = "DRAFT", pgettext_lazy("version status", "草稿")
        PUBLISHED = "PUBLISHED", pgettext_lazy("version status", "已发布")
        RETIRED = "RETIRED", pgettext_lazy("version status", "已停用")

    CONTENT_FIELDS = ("agent_id", "version", "instructions", "model", "routing", "max_steps")
    # The statuses a version may take from each status: "retired" means what "revoked"
    # means for knowledge (never published again), a published one never goes back to
    # DRAFT. save() enforces it; the manifest asks it.
    TRANSITIONS: dict[str, set[str]] = {
        Status.DRAFT: {Status.DRAFT, Status.PUBLISHED, Status.RETIRED},
        Status.PUBLISHED: {Status.PUBLISHED, Status.RETIRED},
        Status.RETIRED: {Status.RETIRED},
    }

    agent = models.ForeignKey(
        Agent,
        on_delete=models.CASCADE,
        related_name="versions",
        verbose_name=pgettext_lazy("field", "智能体"),
    )
    version = models.CharField(max_length=64, verbose_name=pgettext_lazy("field", "版本"))
    status = models.CharField(
        max_length=10,
        choices=Status.choices,
        default=Status.DRAFT,
        verbose_name=pgettext_lazy("field", "状态"),
    )
    instructions = models.TextField(blank=True, verbose_name=pgettext_lazy("field", "指令"))
    model = models.JSONField(
        help_text=_("模型提供方配置，例如 {provider: scripted, steps: [...]}"),
        verbose_name=pgettext_lazy("field", "模型配置"),
    )
    # Routing rules: [{"match": "keyword", "knowledge": ["key@version", ...]}];
    # empty means every allowed version is searched.
    routing = models.JSONField(
        default=list, blank=True, verbose_name=pgettext_lazy("field", "路由规则")
    )
    allowed_knowledge = models.ManyToManyField(
        KnowledgeVersion,
        blank=True,
        related_name="agent_versions",
        verbose_name=pgettext_lazy("field", "允许的知识库版本"),
    )
    sub_agents = models.ManyToManyField(
        Agent,
        blank=True,
        related_name="callable_from",
        verbose_name=pgettext_lazy("field", "可调用的子智能体"),
    )
    max_steps = models.PositiveIntegerField(
        default=20, verbose_name=pgettext_lazy("field", "最大步数")
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )
    published_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "发布时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "智能体版本")
        verbose_name_plural = pgettext_lazy("models", "智能体版本")
        constraints = [
            models.UniqueConstraint(fields=["agent", "version"], name="agentversion_unique_version")
        ]

    def __str__(self) -> str:
        return f"{self.agent.key}@{self.version}"

    @property
    def is_frozen(self) -> bool:
        return self.status != self.Status.DRAFT

    @classmethod
    def transition_refusal(cls, before: str, after: str) -> str | None:
        """Why a version cannot go from ``before`` to ``after`` (None: ``TRANSITIONS``
        allows it). save() refuses with it; the manifest asks it
        (provisioning/writing/agents.py)."""
        if after in cls.TRANSITIONS[before]:
            return None
        if before == cls.Status.RETIRED:
            return "a retired version stays retired; publish a new version"
        return "a published version cannot go back to DRAFT; publish a new version"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            stored = (
                type(self).objects.filter(pk=self.pk).values(*self.CONTENT_FIELDS, "status").first()
            )
            if stored is not None:
                refusal = self.transition_refusal(stored["status"], self.status)
                if refusal is not None:
                    raise ImmutableVersionError(f"Agent version {self}: {refusal}")
            if stored is not None and stored["status"] != self.Status.DRAFT:
                changed = [f for f in self.CONTENT_FIELDS if getattr(self, f) != stored[f]]
                if changed:
                    raise ImmutableVersionError(
                        f"Agent version {self} is published; it cannot change ({', '.join(changed)})."
                    )
        if self.status == self.Status.PUBLISHED and self.published_at is None:
            self.published_at = timezone.now()
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        if self.is_frozen:
            raise ImmutableVersionError(f"Agent version {self} is published; it cannot be deleted.")
        return super().delete(*args, **kwargs)


class AgentPin(models.Model):
    """The exact published agent version an app uses; rollback = pin an older one."""

    app = models.ForeignKey(
        App,
        on_delete=models.CASCADE,
        related_name="agent_pins",
        verbose_name=pgettext_lazy("field", "应用"),
    )
    agent = models.ForeignKey(
        Agent,
        on_delete=models.CASCADE,
        related_name="pins",
        verbose_name=pgettext_lazy("field", "智能体"),
    )
    version = models.ForeignKey(
        AgentVersion,
        on_delete=models.PROTECT,
        related_name="pins",
        verbose_name=pgettext_lazy("field", "版本"),
    )
    pinned_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "固定时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "智能体固定")
        verbose_name_plural = pgettext_lazy("models", "智能体固定")
        constraints = [
            models.UniqueConstraint(fields=["app", "agent"], name="agentpin_unique_app_agent")
        ]

    def __str__(self) -> str:
        return _("%(app)s 固定使用 %(version)s") % {"app": self.app, "version": self.version}

    def save(self, *args: Any, **kwargs: Any) -> None:
        if (
            self.version.status != AgentVersion.Status.PUBLISHED
            or self.version.agent_id != self.agent_id
        ):
            raise ImmutableVersionError(f"Only a published version of {self.agent} can be pinned.")
        if self.agent.tenant_id != self.app.tenant_id:
            raise ImmutableVersionError(f"{self.agent} belongs to another tenant than {self.app}.")
        super().save(*args, **kwargs)
