from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from console import selectors
from console.labels import RUN_STATUS
from runs.api import MAX_INPUT_CHARS
from runs.models import Run
from sparktide.agents.models import AgentPin, AgentVersion
from sparktide.tenancy.models import App, Membership


class RunFilterForm(forms.Form):
    """The runs list filters (GET). Unknown values are simply not applied."""

    status = forms.ChoiceField(label=_("状态"), required=False)
    agent = forms.ChoiceField(label=_("智能体"), required=False)
    owner = forms.ChoiceField(label=_("所有者"), required=False)
    since = forms.DateField(
        label=_("开始日期"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        label=_("结束日期"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    per = forms.TypedChoiceField(
        label=_("每页"),
        required=False,
        coerce=int,
        empty_value=selectors.DEFAULT_PAGE_SIZE,
        choices=[(n, n) for n in selectors.PAGE_SIZES],
    )

    def __init__(self, *args, choices: dict[str, list[str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        everything = [("", _("全部"))]
        self.fields["status"].choices = everything + [
            (status, RUN_STATUS[status]) for status in Run.Status.values
        ]
        self.fields["agent"].choices = everything + [(k, k) for k in choices["agents"]]
        self.fields["owner"].choices = everything + [(u, u) for u in choices["owners"]]

    def _valid(self) -> dict:
        """The fields that are valid; an invalid one is dropped, never the whole filter."""
        self.is_valid()
        return getattr(self, "cleaned_data", {})

    def filters(self, *, tenant: str = "", app: str = "") -> selectors.RunFilters:
        data = self._valid()
        since, until = data.get("since"), data.get("until")
        return selectors.RunFilters(
            tenant=tenant,
            app=app,
            status=data.get("status", ""),
            agent=data.get("agent", ""),
            owner=data.get("owner", ""),
            since=selectors.day_start(since) if since else None,
            until=selectors.day_end(until) if until else None,
        )

    def per_page(self) -> int:
        return self._valid().get("per") or selectors.DEFAULT_PAGE_SIZE


class TryVersionForm(forms.Form):
    """运行调试 with another PUBLISHED version of a pinned agent.

    The owner is an app member chosen by the page (from the prefix of the token the admin
    pasted); the token itself never comes here. The page then reads the run's events
    with that token, which only the owner's token can do.
    """

    agent = forms.SlugField(max_length=64)
    version = forms.IntegerField(min_value=1)
    owner = forms.IntegerField(min_value=1)
    input = forms.CharField(max_length=MAX_INPUT_CHARS, strip=False)

    def __init__(self, *args, app: App, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.app = app

    def clean_input(self) -> str:
        value = self.cleaned_data["input"]
        if not value.strip():
            raise forms.ValidationError(_("请输入问题。"))
        return value

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        pin = (
            AgentPin.objects.filter(app=self.app, agent__key=data["agent"])
            .select_related("agent")
            .first()
        )
        if pin is None:
            raise forms.ValidationError(_("该智能体没有固定在此应用中。"), code="agent")
        version = AgentVersion.objects.filter(
            pk=data["version"], agent=pin.agent, status=AgentVersion.Status.PUBLISHED
        ).first()
        if version is None:
            raise forms.ValidationError(_("只能试用该智能体已发布的版本。"), code="version")
        owner = (
            get_user_model()
            .objects.filter(
                pk=data["owner"],
                is_active=True,
                tenant_user__tenant=self.app.tenant,
                pk__in=Membership.objects.filter(app=self.app).values("user_id"),
            )
            .first()
        )
        if owner is None:
            raise forms.ValidationError(_("运行的所有者必须是此应用的业务用户。"), code="owner")
        data["agent_version"] = version
        data["owner_user"] = owner
        return data
