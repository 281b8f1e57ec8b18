"""Django admin for tenancy: provisioning by platform admins.

Apps use guardian's object-permission screens for ``view_run_history``. Tokens
are issued here (the raw value is shown once, in the confirmation message) and
can only be revoked afterwards, never edited.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models import F, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from foundation.admin_mixins import TranslatedGuardedAdmin
from tenancy.models import ApiToken, App, Membership, Tenant, TenantUser


class TenantUserInline(admin.TabularInline[TenantUser, Tenant]):
    model = TenantUser
    extra = 0
    raw_id_fields = ("user",)


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin[Tenant]):
    list_display = ("key", "name", "created_at")
    search_fields = ("key", "name")
    readonly_fields = ("created_at",)
    inlines = [TenantUserInline]


@admin.register(TenantUser)
class TenantUserAdmin(admin.ModelAdmin[TenantUser]):
    list_display = ("user", "tenant")
    list_filter = ("tenant",)
    list_select_related = ("user", "tenant")
    search_fields = ("user__username", "tenant__key")
    raw_id_fields = ("user",)


class MembershipInline(admin.TabularInline[Membership, App]):
    model = Membership
    extra = 0
    raw_id_fields = ("user",)
    readonly_fields = ("created_at",)


@admin.register(App)
class AppAdmin(TranslatedGuardedAdmin):
    list_display = (
        "slug",
        "name",
        "tenant",
        "status",
        "retention_days",
        "security_policy_epoch",
        "knowledge_access_epoch",
    )
    list_filter = ("status", "tenant")
    list_select_related = ("tenant",)
    search_fields = ("slug", "name", "tenant__key")
    # Epochs only move up, one step at a time, through the actions below: an
    # epoch typed back to an older value would revalidate old runs' previews.
    readonly_fields = ("security_policy_epoch", "knowledge_access_epoch", "created_at")
    inlines = [MembershipInline]
    actions = [
        "suspend_apps",
        "activate_apps",
        "bump_security_policy_epoch",
        "bump_knowledge_access_epoch",
    ]

    @admin.action(description=_("暂停所选应用"), permissions=["change"])
    def suspend_apps(self, request: HttpRequest, queryset: QuerySet[App]) -> None:
        count = queryset.exclude(status=App.Status.SUSPENDED).update(status=App.Status.SUSPENDED)
        self.message_user(
            request, _("已暂停 %(count)d 个应用。") % {"count": count}, messages.SUCCESS
        )

    @admin.action(description=_("启用所选应用"), permissions=["change"])
    def activate_apps(self, request: HttpRequest, queryset: QuerySet[App]) -> None:
        count = queryset.exclude(status=App.Status.ACTIVE).update(status=App.Status.ACTIVE)
        self.message_user(
            request, _("已启用 %(count)d 个应用。") % {"count": count}, messages.SUCCESS
        )

    @admin.action(description=_("提升安全策略版本号"), permissions=["change"])
    def bump_security_policy_epoch(self, request: HttpRequest, queryset: QuerySet[App]) -> None:
        count = queryset.update(security_policy_epoch=F("security_policy_epoch") + 1)
        self.message_user(
            request,
            _("已提升 %(count)d 个应用的安全策略版本号；此前运行的来源不再能打开。")
            % {"count": count},
            messages.SUCCESS,
        )

    @admin.action(description=_("提升知识访问版本号"), permissions=["change"])
    def bump_knowledge_access_epoch(self, request: HttpRequest, queryset: QuerySet[App]) -> None:
        count = queryset.update(knowledge_access_epoch=F("knowledge_access_epoch") + 1)
        self.message_user(
            request,
            _("已提升 %(count)d 个应用的知识访问版本号；此前运行的来源不再能打开。")
            % {"count": count},
            messages.SUCCESS,
        )


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin[Membership]):
    list_display = ("user", "app", "created_at")
    list_filter = ("app",)
    list_select_related = ("user", "app")
    search_fields = ("user__username", "app__slug")
    raw_id_fields = ("user",)
    readonly_fields = ("created_at",)


class BusinessUserChoice(forms.ModelChoiceField[User]):
    """Business users by tenant and name — never a raw row ID to type in."""

    def label_from_instance(self, user: User) -> str:
        return f"{user.tenant_user.tenant.key} / {user.get_username()}"


class ApiTokenForm(forms.ModelForm[ApiToken]):
    user = BusinessUserChoice(
        queryset=get_user_model()
        .objects.filter(tenant_user__isnull=False, is_active=True)
        .select_related("tenant_user__tenant")
        .order_by("tenant_user__tenant__key", "username"),
        label=pgettext_lazy("field", "用户"),
    )

    class Meta:
        model = ApiToken
        fields = ("user", "name")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin[ApiToken]):
    form = ApiTokenForm
    list_display = ("prefix", "user", "name", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    list_select_related = ("user",)
    search_fields = ("prefix", "user__username", "name")
    actions = ["revoke_tokens"]

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> tuple[str, ...]:
        if obj is None:
            return ("user", "name")
        return ("user", "name", "prefix", "created_at", "last_used_at", "revoked_at")

    def get_readonly_fields(
        self, request: HttpRequest, obj: ApiToken | None = None
    ) -> tuple[str, ...]:
        return () if obj is None else self.get_fields(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        # A token is issued and revoked, never edited: the change page is read-only,
        # while the changelist keeps the revoke action.
        if obj is not None:
            return False
        return super().has_change_permission(request, obj)

    def save_model(
        self, request: HttpRequest, obj: ApiToken, form: ModelForm[ApiToken], change: bool
    ) -> None:
        token, raw = ApiToken.issue(obj.user, name=obj.name)
        # The admin goes on with ``obj`` (log entry, redirect): make it the issued row.
        obj.pk, obj.prefix, obj.digest, obj.created_at = (
            token.pk,
            token.prefix,
            token.digest,
            token.created_at,
        )
        self.message_user(
            request,
            _("%(user)s 的令牌：%(token)s — 请现在复制；它只以哈希保存，不会再次显示。")
            % {"user": obj.user, "token": raw},
            messages.WARNING,
        )

    @admin.action(description=_("吊销所选令牌"), permissions=["change"])
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(
            request, _("已吊销 %(count)d 个令牌。") % {"count": count}, messages.SUCCESS
        )
