"""Django admin for knowledge.

A version's content is read-only once it leaves DRAFT (the models refuse the
write anyway; the admin just does not offer it). Documents are created by
ingestion (the manifest), not typed in here; their ACL (``restricted`` and the
guardian ``read_document`` grants) stays editable on every version.
"""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, Exists, OuterRef, QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from foundation.admin_mixins import (
    FrozenOnceOutOfDraftAdmin,
    ReadOnlyAdmin,
    ReadOnlyInline,
    TranslatedGuardedAdmin,
)
from knowledge.admin_upload import UploadDocumentsMixin
from knowledge.models import (
    Chunk,
    Document,
    Fact,
    ImmutableVersionError,
    Knowledge,
    KnowledgeVersion,
    Lease,
    VersionIndex,
    VersionTerm,
    Vocabulary,
)


class KnowledgeVersionInline(ReadOnlyInline):
    model = KnowledgeVersion
    fields = ("version", "status", "published_at", "revoked_at")


@admin.register(Knowledge)
class KnowledgeAdmin(admin.ModelAdmin[Knowledge]):
    list_display = ("key", "tenant", "type", "name")
    list_filter = ("type", "tenant")
    list_select_related = ("tenant",)
    search_fields = ("key", "name", "tenant__key")
    inlines = [KnowledgeVersionInline]

    def get_readonly_fields(
        self, request: HttpRequest, obj: Knowledge | None = None
    ) -> tuple[str, ...]:
        # The type decides what a version holds; it is fixed once created.
        return ("type",) if obj is not None else ()


class DocumentInline(ReadOnlyInline):
    model = Document
    fields = ("key", "title", "source_version", "page_count", "restricted")


class KnowledgeVersionForm(forms.ModelForm[KnowledgeVersion]):
    class Meta:
        model = KnowledgeVersion
        fields = ("knowledge", "version", "endpoint", "secret", "timeout_seconds")
        widgets = {"secret": forms.PasswordInput(render_value=True)}


@admin.register(KnowledgeVersion)
class KnowledgeVersionAdmin(
    UploadDocumentsMixin, FrozenOnceOutOfDraftAdmin, admin.ModelAdmin[KnowledgeVersion]
):
    form = KnowledgeVersionForm
    list_display = (
        "__str__",
        "knowledge",
        "status",
        "document_count",
        "published_at",
        "revoked_at",
    )
    list_filter = ("status", "knowledge__type", "knowledge__tenant")
    list_select_related = ("knowledge__tenant",)
    search_fields = ("version", "knowledge__key")
    inlines = [DocumentInline]
    actions = ["publish_versions", "revoke_versions"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[KnowledgeVersion]:
        return super().get_queryset(request).annotate(_documents=Count("documents"))

    @admin.display(description=_("文档数"), ordering="_documents")
    def document_count(self, obj: Any) -> int:
        return int(obj._documents)

    @admin.display(description=_("签名密钥"))
    def secret_display(self, obj: KnowledgeVersion) -> str:
        return str(_("••••••（已设置）")) if obj.secret else "—"

    def get_fields(  # type: ignore[override]  # the stub's union of field-set shapes
        self, request: HttpRequest, obj: KnowledgeVersion | None = None
    ) -> list[str]:
        fields = ["knowledge", "version", "status", "endpoint", "secret", "timeout_seconds"]
        if obj is not None and obj.is_frozen:
            fields[fields.index("secret")] = "secret_display"
            fields += ["published_at", "revoked_at"]
        elif obj is not None:
            fields.append("upload_link")  # a DRAFT: add documents from files
        return fields

    def get_readonly_fields(
        self, request: HttpRequest, obj: KnowledgeVersion | None = None
    ) -> list[str]:
        # Status moves only through the actions (publish / revoke).
        readonly = ["status", "published_at", "revoked_at", "secret_display", "upload_link"]
        if obj is not None:
            readonly.append("knowledge")
        return readonly

    @admin.action(description=_("发布所选草稿版本"), permissions=["change"])
    def publish_versions(self, request: HttpRequest, queryset: QuerySet[KnowledgeVersion]) -> None:
        published = 0
        for version in queryset.select_related("knowledge"):
            if version.status != KnowledgeVersion.Status.DRAFT:
                self.message_user(
                    request,
                    _("%(version)s 的状态是%(status)s；只有草稿可以发布。")
                    % {"version": version, "status": version.get_status_display()},
                    messages.ERROR,
                )
                continue
            try:
                version.clean()
                version.status = KnowledgeVersion.Status.PUBLISHED
                version.save()
            except (ValidationError, ImmutableVersionError) as exc:
                self.message_user(request, f"{version}: {exc}", messages.ERROR)
                continue
            published += 1
        if published:
            self.message_user(
                request, _("已发布 %(count)d 个版本。") % {"count": published}, messages.SUCCESS
            )

    @admin.action(description=_("撤销所选版本"), permissions=["change"])
    def revoke_versions(self, request: HttpRequest, queryset: QuerySet[KnowledgeVersion]) -> None:
        revoked = 0
        for version in queryset.exclude(status=KnowledgeVersion.Status.REVOKED):
            version.status = KnowledgeVersion.Status.REVOKED
            version.save()
            revoked += 1
        self.message_user(
            request, _("已撤销 %(count)d 个版本。") % {"count": revoked}, messages.SUCCESS
        )


class FactInline(ReadOnlyInline):
    model = Fact
    fields = ("key", "value", "unit", "as_of")
    show_change_link = False


@admin.register(Document)
class DocumentAdmin(TranslatedGuardedAdmin):
    """The ACL stays editable: ``restricted`` here, ``read_document`` grants under
    "Object permissions"."""

    list_display = ("title", "key", "version", "page_count", "restricted")
    list_filter = ("restricted", "version__status", "version__knowledge__tenant")
    list_select_related = ("version__knowledge",)
    search_fields = ("title", "key", "version__knowledge__key")
    fields = ("version", "key", "title", "source_version", "page_count", "restricted", "text")
    readonly_fields = ("version", "key", "title", "source_version", "page_count", "text")
    inlines = [FactInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # documents are ingested (manifest), so their chunks and locators exist

    def has_delete_permission(self, request: HttpRequest, obj: Document | None = None) -> bool:
        if obj is not None and obj.version.is_frozen:
            return False
        return super().has_delete_permission(request, obj)

    def save_model(
        self, request: HttpRequest, obj: Document, form: forms.ModelForm[Document], change: bool
    ) -> None:
        obj.save(update_fields=["restricted"])


@admin.register(Chunk)
class ChunkAdmin(ReadOnlyAdmin):
    list_display = ("document", "ordinal", "page", "start", "end", "digest")
    list_select_related = ("document",)
    search_fields = ("document__title", "document__key")
    list_filter = ("document__version__knowledge__tenant",)


@admin.register(VersionIndex)
class VersionIndexAdmin(ReadOnlyAdmin):
    # Computed when a version is published and never changed (docs/retrieval.md).
    list_display = ("version", "chunk_count", "token_count", "built_at")
    list_select_related = ("version__knowledge",)


@admin.register(VersionTerm)
class VersionTermAdmin(ReadOnlyAdmin):
    list_display = ("version", "token", "chunks")
    list_select_related = ("version__knowledge",)
    search_fields = ("token",)


@admin.register(Vocabulary)
class VocabularyAdmin(ReadOnlyAdmin):
    # Declared in the manifest or by ingest --vocabulary, where it is validated.
    list_display = ("tenant", "knowledge")
    list_select_related = ("tenant", "knowledge")


@admin.register(Fact)
class FactAdmin(ReadOnlyAdmin):
    list_display = ("key", "value", "unit", "as_of", "document")
    list_select_related = ("document",)
    search_fields = ("key", "document__title")


@admin.register(Lease)
class LeaseAdmin(admin.ModelAdmin[Lease]):
    list_display = ("app", "version", "expires_at", "revoked_at", "is_current_now")
    list_filter = ("app", "revoked_at")
    list_select_related = ("app", "version__knowledge")
    search_fields = ("app__slug", "version__knowledge__key", "version__version")
    actions = ["revoke_leases"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Lease]:
        # "Current" is the one lease rule the capability check uses (LeaseQuerySet.current).
        current = Lease.objects.current().filter(pk=OuterRef("pk"))
        return super().get_queryset(request).annotate(current_now=Exists(current))

    @admin.display(boolean=True, description=_("当前"), ordering="current_now")
    def is_current_now(self, obj: Any) -> bool:
        return bool(obj.current_now)

    def get_readonly_fields(self, request: HttpRequest, obj: Lease | None = None) -> list[str]:
        # A lease is for one exact version of one app; re-target = a new lease.
        readonly = ["created_at", "revoked_at"]
        if obj is not None:
            readonly += ["app", "version"]
        return readonly

    @admin.action(description=_("撤销所选租约"), permissions=["change"])
    def revoke_leases(self, request: HttpRequest, queryset: QuerySet[Lease]) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(
            request, _("已撤销 %(count)d 个租约。") % {"count": count}, messages.SUCCESS
        )
