"""Admin behaviour shared by the versioned models of knowledge and agents."""

from django.contrib import admin


class FrozenOnceOutOfDraftAdmin:
    """A published (or revoked, retired) version is read-only in the admin: its
    content may not change and it may not be deleted. The models enforce the
    same rule; the admin only stops offering what would be refused."""

    def has_change_permission(self, request, obj=None):
        if obj is not None and obj.is_frozen:
            return False
        return super().has_change_permission(request, obj)  # type: ignore[misc]  # a mixin: ModelAdmin follows it

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.is_frozen:
            return False
        return super().has_delete_permission(request, obj)  # type: ignore[misc]  # a mixin: ModelAdmin follows it


class ReadOnlyInline(admin.TabularInline):
    """Rows shown in their parent's page; they change through their own admin."""

    extra = 0
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(admin.ModelAdmin):
    """A record the platform writes (runs, answers, citations): operators look, never edit.

    View only — no add, no change, no delete, no bulk action — so the admin can
    never contradict the event log or the publication store.
    """

    actions = None

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
