from typing import Any, cast

from django import forms
from django.utils.translation import gettext_lazy as _

from console import selectors
from console.labels import RUN_STATUS
from runs.models import Run
from tenancy.authentication import authenticate_token


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
        empty_value=selectors.DEFAULT_PAGE_SIZE,  # type: ignore[arg-type]  # any value; the stub says str
        choices=[(n, n) for n in selectors.PAGE_SIZES],
    )

    def __init__(self, *args, choices: dict[str, list[str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        everything = [("", _("全部"))]
        cast(forms.ChoiceField, self.fields["status"]).choices = everything + [
            (status, RUN_STATUS[status]) for status in Run.Status.values
        ]
        cast(forms.ChoiceField, self.fields["agent"]).choices = everything + [
            (k, k) for k in choices["agents"]
        ]
        cast(forms.ChoiceField, self.fields["owner"]).choices = everything + [
            (u, u) for u in choices["owners"]
        ]

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
    """运行调试 with another version of a pinned agent, as the owner of the pasted token.

    The owner is proved by their bearer token, verified here on the server with the
    API's own token check (``authenticate_token``); nothing the page claims about
    whose token it is counts. Which version may run, membership and the input rules
    are ``start_run``'s: this form only parses.
    """

    agent = forms.SlugField(max_length=64)
    version = forms.IntegerField(min_value=1)
    token = forms.CharField(max_length=200, strip=True)
    input = forms.CharField(strip=False)

    def clean_token(self):
        owner = authenticate_token(self.cleaned_data["token"])
        if owner is None:
            raise forms.ValidationError(_("令牌无效或已撤销。"), code="token")
        return owner

    def clean(self):
        data = cast(dict[str, Any], super().clean())  # Form.clean returns cleaned_data
        if "token" in data:
            data["owner_user"] = data.pop("token")
        return data
