from typing import Any, cast

from django import forms
from django.utils.translation import gettext_lazy as _

from api.selectors import MAX_QUESTION_QUERY
from console import selectors
from console.labels import RUN_STATUS
from runs.models import Run
from tenancy.authentication import authenticate_token


class RunFilterForm(forms.Form):
    """The runs list filters (GET). Unknown values are simply not applied."""

    q = forms.CharField(label=_("问题包含"), required=False, max_length=MAX_QUESTION_QUERY)
    status = forms.ChoiceField(label=_("状态"), required=False)
    agent = forms.ChoiceField(label=_("智能体"), required=False)
    version = forms.CharField(
        label=_("版本"),
        required=False,
        max_length=64,
        widget=forms.TextInput(attrs={"placeholder": _("全部")}),
    )
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

    def __init__(self, *args: Any, choices: dict[str, list[str]], **kwargs: Any) -> None:
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

    def _valid(self) -> dict[str, Any]:
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
            version=data.get("version", "") if data.get("agent") else "",
            owner=data.get("owner", ""),
            question=data.get("q", ""),
            since=selectors.day_start(since) if since else None,
            until=selectors.day_end(until) if until else None,
        )

    def per_page(self) -> int:
        return self._valid().get("per") or selectors.DEFAULT_PAGE_SIZE


class OwnerTokenForm(forms.Form):
    """A form whose runs belong to the owner of the pasted bearer token, verified here on
    the server with the API's own token check (``authenticate_token``); nothing the page
    claims about whose token it is counts, and staff never run as someone else."""

    token = forms.CharField(max_length=200, strip=True)

    def clean_token(self) -> Any:
        owner = authenticate_token(self.cleaned_data["token"])
        if owner is None:
            raise forms.ValidationError(_("令牌无效或已撤销。"), code="token")
        return owner

    def clean(self) -> dict[str, Any]:
        data = cast(dict[str, Any], super().clean())  # Form.clean returns cleaned_data
        if "token" in data:
            data["owner_user"] = data.pop("token")
        return data


class TryVersionForm(OwnerTokenForm):
    """运行调试 with another version of a pinned agent, as the owner of the pasted token.
    Which version may run, membership and the input rules are ``start_run``'s: this form
    only parses."""

    agent = forms.SlugField(max_length=64)
    version = forms.IntegerField(min_value=1)
    input = forms.CharField(strip=False)

    field_order = ["agent", "version", "token", "input"]


class RerunForm(OwnerTokenForm):
    """用其他版本重跑 as the owner of the pasted token: which agent version (a pk). That the
    token is the run owner's own and that the version may run are ``start_rerun``'s."""

    version = forms.IntegerField(min_value=1)


class EvaluationForm(OwnerTokenForm):
    """评测: a set (uploaded, or shipped for the app), one or two published versions, the
    member the questions run as (their token). The set's checks, membership and which
    version may run are the evaluation service's (evaluation/service.py): this form only
    parses and hands the set's data to it."""

    set_file = forms.FileField(label=_("上传评测集"), required=False)
    shipped = forms.ChoiceField(label=_("或选择应用自带的评测集"), required=False)
    first = forms.ChoiceField(label=_("版本"))
    second = forms.ChoiceField(label=_("对比版本（可选）"), required=False)

    def __init__(self, *args: Any, versions: list[str], shipped: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["token"].label = _("问题以谁的身份运行（该成员的令牌）")
        self.fields["token"].widget = forms.PasswordInput(attrs={"autocomplete": "off"})
        cast(forms.ChoiceField, self.fields["first"]).choices = [(v, v) for v in versions]
        cast(forms.ChoiceField, self.fields["second"]).choices = [("", "—")] + [
            (v, v) for v in versions
        ]
        cast(forms.ChoiceField, self.fields["shipped"]).choices = [("", "—")] + [
            (name, name) for name in shipped
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload, shipped = data.get("set_file"), data.get("shipped")
        if bool(upload) == bool(shipped):
            raise forms.ValidationError(
                _("请上传一个评测集文件，或选择一个应用自带的评测集（二选一）。"), code="set"
            )
        if upload is not None and upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                _("评测集文件最大 %(limit)d MiB。") % {"limit": MAX_UPLOAD_BYTES // 2**20},
                code="set",
            )
        data["agents"] = [v for v in (data.get("first"), data.get("second")) if v]
        return data

    def set_text(self) -> tuple[str, str]:
        """The uploaded file's (text, name); a file that is not UTF-8 is refused."""
        upload = self.cleaned_data["set_file"]
        try:
            return upload.read().decode("utf-8"), upload.name
        except UnicodeDecodeError:
            raise forms.ValidationError(_("评测集文件不是 UTF-8 文本。"), code="set")


# An uploaded set: well above any hand-written set, far below the request limit's spirit.
MAX_UPLOAD_BYTES = 4 * 2**20
