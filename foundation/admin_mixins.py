"""Admin behaviour shared by the versioned models of knowledge and agents."""

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from guardian.admin import GroupManage, GuardedModelAdmin


class FrozenOnceOutOfDraftAdmin:
    """A published (or revoked, retired) version is read-only in the admin: its
    content may not change and it may not be deleted. The models enforce the
    same rule; the admin only stops offering what would be refused."""

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.is_frozen:
            return False
        allowed: bool = super().has_change_permission(request, obj)  # type: ignore[misc]  # a mixin: ModelAdmin follows it
        return allowed

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.is_frozen:
            return False
        allowed: bool = super().has_delete_permission(request, obj)  # type: ignore[misc]  # a mixin: ModelAdmin follows it
        return allowed


class ReadOnlyInline(admin.TabularInline[Any, Any]):
    """Rows shown in their parent's page; they change through their own admin."""

    extra = 0
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """A record the platform writes (runs, answers, citations): operators look, never edit.

    View only — no add, no change, no delete, no bulk action — so the admin can
    never contradict the event log or the publication store.
    """

    actions = None

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class _GroupManage(GroupManage):
    """guardian's group field, which it leaves unnamed (shown as "Group"), named in the
    admin's language; guardian's own catalog (zh_Hans) covers the rest of its screens."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["group"].label = _("组")


class TranslatedGuardedAdmin(GuardedModelAdmin):
    """guardian's object-permission screens, every label in the admin's language."""

    def get_obj_perms_group_select_form(self, request: HttpRequest) -> type[forms.Form]:
        return _GroupManage
