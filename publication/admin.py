"""Answer blocks, their revisions and every publication attempt, read-only in the admin.

No answer body is shown here: bodies leave the store only through the reader
(publication/reader.py), which applies the viewer's current authorization — the
console's 运行详情 (linked from every run) shows them that way. The admin shows
the records around them: identity, revision, outcome, reason, digest, bindings.
"""

from django.contrib import admin
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from foundation.admin_mixins import ReadOnlyAdmin, ReadOnlyInline
from publication.models import (
    AnswerBlock,
    BlockDependency,
    BlockRevision,
    PublicationAttempt,
    SourceBinding,
    SourceHint,
)
from runs.admin import run_links


class BlockRevisionInline(ReadOnlyInline):
    model = BlockRevision
    fields = ("revision", "role", "source_hint", "truncated", "body_digest", "committed_at")


@admin.register(AnswerBlock)
class AnswerBlockAdmin(ReadOnlyAdmin):
    list_display = ("id", "run", "delivery_ordinal", "origin", "current_revision", "created_at")
    list_filter = ("origin",)
    list_select_related = ("run",)
    search_fields = ("id", "run__id")
    readonly_fields = ("run_records",)
    inlines = [BlockRevisionInline]

    @admin.display(description=_("运行"))
    def run_records(self, obj: AnswerBlock) -> str:
        return run_links(obj.run_id)


class SourceBindingInline(ReadOnlyInline):
    model = SourceBinding
    fields = ("cited_id", "citation", "verified")
    show_change_link = False


class BlockDependencyInline(ReadOnlyInline):
    model = BlockDependency
    fk_name = "revision"
    fields = ("depends_on",)
    show_change_link = False


@admin.register(BlockRevision)
class BlockRevisionAdmin(ReadOnlyAdmin):
    list_display = ("block", "revision", "role", "source_hint", "truncated", "committed_at")
    list_filter = ("role", "source_hint", "truncated")
    list_select_related = ("block",)
    search_fields = ("block__id", "block__run__id")
    exclude = ("content",)  # the body: only through the reader (运行详情)
    inlines = [SourceBindingInline, BlockDependencyInline]


@admin.register(PublicationAttempt)
class PublicationAttemptAdmin(ReadOnlyAdmin):
    list_display = (
        "candidate_id",
        "run",
        "entry",
        "outcome",
        "reason",
        "effect",
        "block",
        "revision",
        "created_at",
    )
    list_filter = ("outcome", "entry", "reason")
    list_select_related = ("run", "block")
    search_fields = ("candidate_id", "run__id", "block__id")
    # The candidate body: never shown outside the reader. The hint as written is a
    # free string: shown by its label when it is one SourceHint names.
    exclude = ("content", "source_hint")
    readonly_fields = ("source_hint_label",)

    @admin.display(description=pgettext_lazy("field", "来源提示"))
    def source_hint_label(self, obj: PublicationAttempt) -> str:
        if obj.source_hint in SourceHint.values:
            return str(SourceHint(obj.source_hint).label)
        return obj.source_hint or "—"
