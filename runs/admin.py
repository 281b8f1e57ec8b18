"""The operator's view of runs in the Django admin: read-only, linked to the console.

Runs, their agent calls, events and runtime journal are written by the platform
only; the admin shows them (ReadOnlyAdmin) and links each run to its 运行详情 in
the console and to its answer blocks, attempts and citations here. No answer or
candidate body is shown in the admin (see publication/admin.py): 运行详情 shows them
through the reader.
"""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from foundation.admin_mixins import ReadOnlyAdmin, ReadOnlyInline
from runs.models import AgentCall, JournalEntry, Run, RunEvent


def run_links(run_id: str) -> str:
    """Links from one run to the console and to its records in the admin."""
    links = [
        (reverse("console:run", args=[run_id]), _("在控制台查看")),
        (reverse("admin:runs_runevent_changelist") + f"?run__id__exact={run_id}", _("事件")),
        (
            reverse("admin:publication_answerblock_changelist") + f"?run__id__exact={run_id}",
            _("回答块"),
        ),
        (
            reverse("admin:publication_publicationattempt_changelist")
            + f"?run__id__exact={run_id}",
            _("发布尝试"),
        ),
        (
            reverse("admin:citations_citationreference_changelist") + f"?run__id__exact={run_id}",
            _("引用"),
        ),
    ]
    return format_html_join(" · ", '<a href="{}">{}</a>', links)


class AgentCallInline(ReadOnlyInline):
    model = AgentCall
    fields = ("depth", "parent", "agent_version", "status", "started_at", "completed_at")


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "app",
        "owner",
        "agent_version",
        "status",
        "reason",
        "created_at",
        "completed_at",
        "console_link",
    )
    list_filter = ("status", "app", "tenant")
    list_select_related = ("app", "owner", "agent_version__agent")
    search_fields = ("id", "session_id", "owner__username", "app__slug")
    date_hierarchy = "created_at"
    readonly_fields = ("links",)
    fields = (
        "links",
        ("tenant", "app", "owner"),
        "agent_version",
        "input",
        "session_id",
        ("status", "reason"),
        "reason_detail",
        ("security_policy_epoch", "knowledge_access_epoch"),
        ("created_at", "started_at", "completed_at"),
        ("cancel_requested_at", "archived_at"),
        ("worker_id", "heartbeat_at"),
        ("last_seq", "block_count", "revision_quota_used", "citation_count"),
    )
    inlines = [AgentCallInline]

    @admin.display(description=_("控制台"))
    def console_link(self, obj: Run) -> str:
        return format_html(
            '<a href="{}">{}</a>', reverse("console:run", args=[obj.pk]), _("运行详情")
        )

    @admin.display(description=_("链接"))
    def links(self, obj: Run) -> str:
        return run_links(obj.pk)


@admin.register(AgentCall)
class AgentCallAdmin(ReadOnlyAdmin):
    list_display = ("id", "run", "depth", "agent_version", "status", "started_at", "completed_at")
    list_filter = ("status",)
    list_select_related = ("run", "agent_version__agent")
    search_fields = ("run__id",)
    exclude = ("result_text",)  # answer text: only through the reader (运行详情)


@admin.register(RunEvent)
class RunEventAdmin(ReadOnlyAdmin):
    list_display = ("run", "seq", "type", "at")
    list_filter = ("type",)
    list_select_related = ("run",)
    search_fields = ("run__id", "type")


@admin.register(JournalEntry)
class JournalEntryAdmin(ReadOnlyAdmin):
    list_display = ("run", "step", "kind", "tool", "at")
    list_filter = ("kind", "tool")
    list_select_related = ("run",)
    search_fields = ("run__id",)
    # The journal's data holds the model's text and send_answer_part bodies: 运行详情
    # shows it with the bodies redacted; the admin shows only what the step was.
    exclude = ("data",)
