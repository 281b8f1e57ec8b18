import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class Tenant(models.Model):
    key = models.SlugField(max_length=64, unique=True, verbose_name=pgettext_lazy("field", "标识"))
    name = models.CharField(max_length=200, verbose_name=pgettext_lazy("field", "名称"))
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "租户")
        verbose_name_plural = pgettext_lazy("models", "租户")

    def __str__(self) -> str:
        return self.key


class TenantUser(models.Model):
    """A business user belongs to exactly one tenant."""

    tenant = models.ForeignKey(
        Tenant,
        on_delete=models.CASCADE,
        related_name="users",
        verbose_name=pgettext_lazy("field", "租户"),
    )
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="tenant_user",
        verbose_name=pgettext_lazy("field", "用户"),
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "租户用户")
        verbose_name_plural = pgettext_lazy("models", "租户用户")

    def __str__(self) -> str:
        return f"{self.user} @ {self.tenant}"


class App(models.Model):
    # Not a field: the app's agent pins, attached by the console's navigation.
    pinned: list[Any]

    class Status(models.TextChoices):
        ACTIVE = "ACTIVE", pgettext_lazy("app status", "启用")
        SUSPENDED = "SUSPENDED", pgettext_lazy("app status", "已暂停")
        DISABLED = "DISABLED", pgettext_lazy("app status", "已停用")

    tenant = models.ForeignKey(
        Tenant,
        on_delete=models.CASCADE,
        related_name="apps",
        verbose_name=pgettext_lazy("field", "租户"),
    )
    slug = models.SlugField(
        max_length=64, unique=True, verbose_name=pgettext_lazy("field", "短标识")
    )
    name = models.CharField(max_length=200, verbose_name=pgettext_lazy("field", "名称"))
    status = models.CharField(
        max_length=16,
        choices=Status.choices,
        default=Status.ACTIVE,
        verbose_name=pgettext_lazy("field", "状态"),
    )
    retention_days = models.PositiveIntegerField(
        default=30, verbose_name=pgettext_lazy("field", "保留天数")
    )
    # Bumped by an operator when the app's security policy or knowledge access
    # configuration changes; a run records both at start, and a preview refuses
    # to re-open sources of a run made under an older policy.
    security_policy_epoch = models.PositiveIntegerField(
        default=1, verbose_name=pgettext_lazy("field", "安全策略版本号")
    )
    knowledge_access_epoch = models.PositiveIntegerField(
        default=1, verbose_name=pgettext_lazy("field", "知识访问版本号")
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "应用")
        verbose_name_plural = pgettext_lazy("models", "应用")
        permissions = [("view_run_history", "May read the app's run history and source excerpts")]

    def __str__(self) -> str:
        return self.slug

    @property
    def is_active(self) -> bool:
        return self.status == self.Status.ACTIVE


class MembershipQuerySet(models.QuerySet["Membership"]):
    def current(self) -> "MembershipQuerySet":
        """The memberships that make their user a member now: an active user, a business
        user of the app's own tenant. The one home of "is a member" — starting a run
        (runtime/services.py ``require_member``) and naming an app (runs/access.py
        ``access_app_for_member``) both ask it."""
        return self.filter(
            user__is_active=True, user__tenant_user__tenant_id=models.F("app__tenant_id")
        )


class Membership(models.Model):
    app = models.ForeignKey(
        App,
        on_delete=models.CASCADE,
        related_name="memberships",
        verbose_name=pgettext_lazy("field", "应用"),
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="memberships",
        verbose_name=pgettext_lazy("field", "用户"),
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )

    objects = MembershipQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "应用成员")
        verbose_name_plural = pgettext_lazy("models", "应用成员")
        constraints = [
            models.UniqueConstraint(fields=["app", "user"], name="membership_unique_app_user")
        ]

    def __str__(self) -> str:
        return _("%(app)s 的成员 %(user)s") % {"user": self.user, "app": self.app}


TOKEN_PREFIX = "st_"


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def usable(self) -> "ApiTokenQuerySet":
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    """A bearer credential of one business user, stored only as a SHA-256 hash.

    The token is tenant-wide (the manifest gives users tokens at tenant level);
    which apps it reaches is decided by the user's memberships at each request.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="api_tokens",
        verbose_name=pgettext_lazy("field", "用户"),
    )
    name = models.CharField(
        max_length=100, default="default", verbose_name=pgettext_lazy("field", "名称")
    )
    prefix = models.CharField(
        max_length=12,
        help_text=_("令牌的前几个字符，用于识别令牌。"),
        verbose_name=pgettext_lazy("field", "前缀"),
    )
    digest = models.CharField(
        max_length=64, unique=True, verbose_name=pgettext_lazy("field", "摘要值")
    )
    created_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "创建时间")
    )
    last_used_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "最近使用时间")
    )
    revoked_at = models.DateTimeField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "撤销时间")
    )

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "API 令牌")
        verbose_name_plural = pgettext_lazy("models", "API 令牌")

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @classmethod
    def issue(
        cls, user: User, *, name: str = "default", raw: str | None = None
    ) -> tuple["ApiToken", str]:
        """Create a token; the raw value is returned once and never stored."""
        raw = raw or TOKEN_PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(user=user, name=name, prefix=raw[:10], digest=hash_token(raw))
        return token, raw

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])
