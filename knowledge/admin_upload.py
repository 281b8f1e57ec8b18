"""The admin's 上传文档 (upload documents) page of a DRAFT knowledge version.

A file (plain text, Markdown, PDF with a text layer, DOCX) becomes a document of
the version through the same reader and ingestion as ``manage.py ingest``
(knowledge/files.py); publishing stays the version's publish action.
"""

from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _

from knowledge.files import KINDS, UnreadableFile, ingest_file, read_stream
from knowledge.models import Knowledge, KnowledgeVersion

MAX_UPLOAD_BYTES = 50 * 1024 * 1024


class UploadDocumentForm(forms.Form):
    file = forms.FileField(
        label=_("文件"), help_text=_("纯文本、Markdown、带文本层的 PDF 或 DOCX（不做 OCR）")
    )
    key = forms.SlugField(label=_("文档键"), required=False, help_text=_("留空则取文件名"))
    title = forms.CharField(
        label=_("标题"), required=False, max_length=500, help_text=_("留空则取文件内的标题")
    )
    source_version = forms.CharField(label=_("原文件版本"), required=False, max_length=128)
    restricted = forms.BooleanField(
        label=_("受限"), required=False, help_text=_("仅被授予 read_document 的用户可读")
    )

    def __init__(self, *args: Any, version: KnowledgeVersion, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.version = version
        self.fields["file"].widget.attrs["accept"] = ",".join(sorted(KINDS))

    def clean(self) -> dict[str, Any]:
        data = cast(dict[str, Any], super().clean())  # Form.clean returns cleaned_data
        upload = data.get("file")
        if upload is None:
            return data
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError(_("文件超过 50 MB。"))
        try:
            self.parsed = read_stream(upload, upload.name)
        except UnreadableFile as exc:
            raise forms.ValidationError(str(exc))
        data["key"] = data.get("key") or slugify(upload.name.rsplit(".", 1)[0]) or "document"
        if self.version.documents.filter(key=data["key"]).exists():
            self.add_error("key", _("此版本已有同键的文档。"))
        return data


def can_upload(version: KnowledgeVersion) -> bool:
    return (
        version.status == KnowledgeVersion.Status.DRAFT
        and version.knowledge.type != Knowledge.Type.REMOTE
    )


if TYPE_CHECKING:
    _AdminBase = admin.ModelAdmin[KnowledgeVersion]
else:
    _AdminBase = object  # a mixin: the ModelAdmin it is mixed into follows it


class UploadDocumentsMixin(_AdminBase):
    """Adds ``<id>/upload/`` and the link to it on a DRAFT version's page."""

    def get_urls(self) -> list[URLPattern]:
        urls = [
            path(
                "<path:object_id>/upload/",
                self.admin_site.admin_view(self.upload_view),
                name="knowledge_knowledgeversion_upload",
            )
        ]
        return urls + super().get_urls()

    @admin.display(description=_("上传文档"))
    def upload_link(self, obj: KnowledgeVersion | None) -> str:
        if obj is None or obj.pk is None or not can_upload(obj):
            return "—"
        url = reverse("admin:knowledge_knowledgeversion_upload", args=[obj.pk])
        return format_html('<a class="button" href="{}">{}</a>', url, _("上传文档"))

    def upload_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        version = get_object_or_404(
            KnowledgeVersion.objects.select_related("knowledge"), pk=object_id
        )
        if not self.has_change_permission(request, version) or not can_upload(version):
            raise PermissionDenied
        form = UploadDocumentForm(request.POST or None, request.FILES or None, version=version)
        if request.method == "POST" and form.is_valid():
            lines: list[str] = []
            with transaction.atomic():
                document = ingest_file(
                    version,
                    form.parsed,
                    key=form.cleaned_data["key"],
                    title=form.cleaned_data["title"],
                    source_version=form.cleaned_data["source_version"],
                    restricted=form.cleaned_data["restricted"],
                    progress=lines.append,
                )
            self.message_user(
                request,
                _("已导入 %(title)s：%(pages)d 页，%(chunks)s")
                % {
                    "title": document.title,
                    "pages": document.page_count,
                    "chunks": lines[-1].strip(),
                },
                messages.SUCCESS,
            )
            return redirect("admin:knowledge_knowledgeversion_change", version.pk)
        context = {
            **self.admin_site.each_context(request),
            "title": _("上传文档到 %(version)s") % {"version": version},
            "opts": self.model._meta,
            "original": version,
            "form": form,
            "has_view_permission": True,
        }
        return TemplateResponse(request, "admin/knowledge/upload_document.html", context)
