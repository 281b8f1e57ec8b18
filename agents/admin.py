"""Django admin for agents: versions are read-only once published; apps pin
exact published versions (rolling back = pinning an older one)."""

from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.db.models import ForeignKey, ManyToManyField, QuerySet
from django.forms import ModelChoiceField, ModelMultipleChoiceField
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from agents.models import Agent, AgentPin, AgentVersion
from agents.providers import ModelConfigError, validate_model_config
from agents.versions import PinnedVersionError, retire_version
from foundation.admin_mixins import FrozenOnceOutOfDraftAdmin, ReadOnlyInline
from knowledge.models import ImmutableVersionError, KnowledgeVersion


class AgentVersionInline(ReadOnlyInline):
    model = AgentVersion
    fields = ("version", "status", "max_steps", "published_at")


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin[Agent]):
    list_display = ("key", "tenant", "name")
    list_filter = ("tenant",)
    list_select_related = ("tenant",)
    search_fields = ("key", "name", "tenant__key")
    inlines = [AgentVersionInline]


class AgentVersionForm(forms.ModelForm[AgentVersion]):
    class Meta:
        model = AgentVersion
        fields = ("model",)  # the admin's fieldsets add the rest

    def clean_model(self) -> Any:
        # The providers' validator: the admin accepts what an agent call can run.
        config = self.cleaned_data.get("model")
        try:
            validate_model_config(config)
        except ModelConfigError as exc:
            raise forms.ValidationError(str(exc)) from None
        return config


@admin.register(AgentVersion)
class AgentVersionAdmin(FrozenOnceOutOfDraftAdmin, admin.ModelAdmin[AgentVersion]):
    form = AgentVersionForm
    list_display = ("__str__", "agent", "status", "max_steps", "published_at")
    list_filter = ("status", "agent__tenant")
    list_select_related = ("agent__tenant",)
    search_fields = ("version", "agent__key")
    filter_horizontal = ("allowed_knowledge", "sub_agents")
    fields = (
        "agent",
        "version",
        "status",
        "instructions",
        "model",
        "routing",
        "allowed_knowledge",
        "sub_agents",
        "max_steps",
        "created_at",
        "published_at",
    )
    actions = ["publish_versions", "retire_versions"]

    def get_readonly_fields(
        self, request: HttpRequest, obj: AgentVersion | None = None
    ) -> list[str]:
        readonly = ["status", "created_at", "published_at"]
        if obj is not None:
            readonly.append("agent")
        return readonly

    def formfield_for_manytomany(
        self, db_field: ManyToManyField[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> ModelMultipleChoiceField[Any] | None:
        if db_field.name == "allowed_knowledge":
            kwargs["queryset"] = KnowledgeVersion.objects.filter(
                status=KnowledgeVersion.Status.PUBLISHED
            ).select_related("knowledge__tenant")
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    @admin.action(description=_("发布所选草稿版本"), permissions=["change"])
    def publish_versions(self, request: HttpRequest, queryset: QuerySet[AgentVersion]) -> None:
        published = 0
        for version in queryset.filter(status=AgentVersion.Status.DRAFT):
            version.status = AgentVersion.Status.PUBLISHED
            try:
                version.save()
            except ImmutableVersionError as exc:
                self.message_user(request, f"{version}: {exc.detail}", messages.ERROR)
                continue
            published += 1
        self.message_user(
            request, _("已发布 %(count)d 个版本。") % {"count": published}, messages.SUCCESS
        )

    @admin.action(description=_("停用所选已发布版本"), permissions=["change"])
    def retire_versions(self, request: HttpRequest, queryset: QuerySet[AgentVersion]) -> None:
        retired = 0
        for version in queryset.filter(status=AgentVersion.Status.PUBLISHED):
            try:
                retire_version(version)
            except PinnedVersionError as exc:
                self.message_user(request, f"{exc}.", messages.ERROR)
                continue
            retired += 1
        self.message_user(
            request, _("已停用 %(count)d 个版本。") % {"count": retired}, messages.SUCCESS
        )


class AgentPinForm(forms.ModelForm[AgentPin]):
    class Meta:
        model = AgentPin
        fields = ("app", "agent", "version")

    def clean(self) -> dict[str, Any]:
        cleaned = cast(dict[str, Any], super().clean())  # ModelForm.clean returns cleaned_data
        agent, version, app = cleaned.get("agent"), cleaned.get("version"), cleaned.get("app")
        if agent and version and version.agent_id != agent.pk:
            self.add_error(
                "version",
                _("%(version)s 不是 %(agent)s 的版本。") % {"version": version, "agent": agent},
            )
        if app and agent and app.tenant_id != agent.tenant_id:
            self.add_error("agent", _("该智能体与应用属于不同的租户。"))
        return cleaned


@admin.register(AgentPin)
class AgentPinAdmin(admin.ModelAdmin[AgentPin]):
    form = AgentPinForm
    list_display = ("app", "agent", "version", "pinned_at")
    list_filter = ("app",)
    list_select_related = ("app", "agent", "version")
    readonly_fields = ("pinned_at",)

    def formfield_for_foreignkey(
        self, db_field: ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField[Any] | None:
        if db_field.name == "version":
            kwargs["queryset"] = AgentVersion.objects.filter(
                status=AgentVersion.Status.PUBLISHED
            ).select_related("agent")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(
        self, request: HttpRequest, obj: AgentPin, form: forms.ModelForm[AgentPin], change: bool
    ) -> None:
        if change and "version" in form.changed_data:
            obj.pinned_at = timezone.now()
        super().save_model(request, obj, form, change)
