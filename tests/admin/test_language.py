"""The Django admin speaks Chinese by default and English through the console's language switch.

Every page of the product's models — each changelist and each change form (and add form where
one is offered) — is fetched as the platform admin. In Chinese no English label the product
gives the admin may remain: the labels compared are all of them, read from the models and the
admins in English (app, model and field names, help texts, choice labels, action and column
descriptions), not a hand-picked few. In English the same labels are there, in English.
"""

import re
from html.parser import HTMLParser
from urllib.parse import unquote_plus

import pytest
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.utils import flatten_fieldsets, label_for_field, quote
from django.db.models import Model
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils.text import capfirst
from django.utils.translation import gettext, override

pytestmark = pytest.mark.django_db

PRODUCT_APPS = {
    "tenancy",
    "knowledge",
    "agents",
    "runs",
    "citations",
    "publication",
    "evaluation",
    "django_tasks_database",  # the task queue's results, re-registered by runtime/admin.py
}
# Identifiers in the data (run_…, run.started, send_answer_part, researcher@1, 2026-10): they are
# values, not labels, and may contain a label's letters.
IDENTIFIER = re.compile(r"[\w.@/:-]*[_.@/\d-][\w.@/:-]*")
JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def product_admins() -> list[tuple[type[Model], admin.ModelAdmin]]:
    return sorted(
        (
            (model, model_admin)
            for model, model_admin in admin.site._registry.items()
            if model._meta.app_label in PRODUCT_APPS
        ),
        key=lambda pair: pair[0]._meta.label,
    )


def _label_sources(model: type[Model], model_admin: admin.ModelAdmin) -> list:
    """The lazy strings the admin shows for a model, its inlines' models and its admin."""
    sources: list = []
    for shown in [model, *(inline.model for inline in model_admin.inlines)]:
        opts = shown._meta
        sources += [opts.verbose_name, opts.verbose_name_plural, opts.app_config.verbose_name]
        for field in opts.get_fields():
            if field.auto_created and not field.concrete:
                continue  # a reverse relation: named by the other model
            sources += [field.verbose_name, field.help_text]
            sources += [label for _, label in (field.flatchoices or [])]
    for name in list(model_admin.actions or []) + list(model_admin.list_display):
        attr = name if callable(name) else getattr(model_admin, name, None)
        description = getattr(attr, "short_description", None)
        if description:
            sources.append(description)
    return sources


def english_labels(model: type[Model], model_admin: admin.ModelAdmin) -> set[str]:
    """The labels in English that Chinese changes: a label spelled alike in both (ID) is not one."""
    labels = set()
    for source in _label_sources(model, model_admin):
        with override("en"):
            english = str(source).strip()
        with override("zh-hans"):
            chinese = str(source).strip()
        if english and english.casefold() != chinese.casefold():
            labels.add(english)
    return labels


def all_english_labels() -> set[str]:
    labels: set[str] = set()
    for model, model_admin in product_admins():
        labels |= english_labels(model, model_admin)
    return labels


class _Text(HTMLParser):
    """The text a person reads: text nodes and button labels, never scripts or styles.

    A filter's link whose text is the very value it filters by (``?tool=search``) is a
    value from the data, not a label."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0
        self._href = ""

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        values = dict(attrs)
        if tag == "a":
            self._href = unquote_plus(values.get("href") or "")
        if tag == "input" and values.get("type") in ("submit", "button"):
            self.parts.append(values.get("value") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1
        if tag == "a":
            self._href = ""

    def handle_data(self, data: str) -> None:
        value = data.strip()
        if self._href and value and re.search(rf"=({re.escape(value)})(&|$)", self._href):
            return
        if not self._skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def english_left(text: str, labels: set[str]) -> set[str]:
    # JSON shown as it is stored (a model config, a source reference) is data: its keys too.
    words = IDENTIFIER.sub(" ", JSON_STRING.sub(" ", text))
    # As written or capitalised (a column, a form label): codes in the data ("publication",
    # a tool's name) are not the label "Publication".
    return {
        label
        for label in labels
        for spelling in {label, capfirst(label)}
        if re.search(rf"(?<![A-Za-z]){re.escape(spelling)}(?![A-Za-z])", words)
    }


def english_phrases(text: str) -> set[str]:
    """A phrase of English words, capitalised as a label or a sentence is ("Filter by …",
    "- Select an option -"): Django's own strings or a package's that their zh_Hans catalog
    lacks. The data's keys and names (acme, alice, researcher) are lower case."""
    words = IDENTIFIER.sub(" ", JSON_STRING.sub(" ", text))
    # django_tasks_db's object name (its model's own __str__), SparkTide does not set it.
    words = re.sub(r"DBTaskResult object", " ", words)
    return set(re.findall(r"(?<![A-Za-z])[A-Z][a-z]+ [a-z]+(?![A-Za-z])", words))


def pages(model: type[Model], model_admin: admin.ModelAdmin, request) -> list[tuple[str, list]]:
    """(url, fields shown) of the model's changelist, first object's change form and add form."""
    info = f"admin:{model._meta.app_label}_{model._meta.model_name}"
    obj = model._default_manager.order_by("pk").first()
    assert obj is not None, f"no {model._meta.label} row: its pages would show no column"
    shown = [
        (reverse(f"{info}_changelist"), list(model_admin.get_list_display(request))),
        (
            reverse(f"{info}_change", args=[quote(obj.pk)]),  # admin URLs escape "_"
            flatten_fieldsets(model_admin.get_fieldsets(request, obj)),
        ),
    ]
    if model_admin.has_add_permission(request):
        shown.append(
            (reverse(f"{info}_add"), flatten_fieldsets(model_admin.get_fieldsets(request)))
        )
    return shown


def _label(name, model, model_admin) -> str:
    return str(capfirst(label_for_field(name, model, model_admin)))


def _staff_request(admin_user):
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    return request


def test_language_code_is_chinese_with_djangos_zh_hans_catalog():
    # zh-hans is the locale zh_Hans, whose catalog Django's own admin strings come from.
    assert settings.LANGUAGE_CODE == "zh-hans"
    with override(settings.LANGUAGE_CODE):
        assert str(admin.site.site_header) == "Django 管理"
        assert str(capfirst(gettext("Save"))) == "保存"


def test_every_product_admin_page_in_chinese_has_no_english_label(
    every_row, root_client: Client, admin_user
):
    request = _staff_request(admin_user)
    labels = all_english_labels()
    assert {"Status", "Published at", "Run after", "Revoke the selected leases"} & {
        capfirst(label) for label in labels
    }, "the list of labels is read from the models and admins"
    left: dict[str, set[str]] = {}
    checked = 0
    for model, model_admin in product_admins():
        for url, fields in pages(model, model_admin, request):
            response = root_client.get(url)
            assert response.status_code == 200, url
            text = visible_text(response.content.decode())
            # Real content: each field's Chinese label is on the page.
            for name in fields:
                with override("zh-hans"):
                    label = _label(name, model, model_admin)
                assert label in text, f"{url}: label {label!r} of {name} missing"
            found = english_left(text, labels) | english_phrases(text)
            if found:
                left[url] = found
            checked += 1
    assert checked >= 2 * len(product_admins()), checked
    assert left == {}


def test_every_product_admin_page_in_english_through_the_language_switch(
    every_row, root_client: Client, admin_user
):
    # The console's language switch (/i18n/setlang/) sets the language cookie.
    response = root_client.post("/i18n/setlang/", {"language": "en", "next": "/admin/"})
    assert response.status_code == 302
    request = _staff_request(admin_user)
    for model, model_admin in product_admins():
        for url, fields in pages(model, model_admin, request):
            response = root_client.get(url)
            assert response.status_code == 200, url
            text = visible_text(response.content.decode())
            with override("en"):
                names = [str(capfirst(model._meta.verbose_name_plural))] + [
                    _label(name, model, model_admin) for name in fields
                ]
            for label in names:
                assert label in text, f"{url}: English label {label!r} missing"


def test_admin_index_and_object_permissions_in_chinese(every_row, root_client: Client):
    """The index names every app and model in Chinese; guardian's object-permission page of an
    app (its catalog is zh_Hans) and the app's name and permission screen carry no English."""
    labels = all_english_labels()
    from tenancy.models import App

    app = App.objects.get(slug="business")
    index = visible_text(root_client.get("/admin/").content.decode())
    for model, _admin in product_admins():
        with override("zh-hans"):
            assert str(capfirst(model._meta.verbose_name_plural)) in index
            assert str(model._meta.app_config.verbose_name) in index
    assert english_left(index, labels) == set()
    assert "后台任务" in index and "Tasks Database Backend" not in index

    url = reverse("admin:tenancy_app_permissions", args=[app.pk])
    response = root_client.get(url)
    assert response.status_code == 200
    text = visible_text(response.content.decode())
    assert "对象权限" in text and "用户权限" in text and "组:" in text
    for english in ("Object permissions", "User permissions", "Group permissions", "Group:"):
        assert english not in text
    # Permission names are rows Django writes when it migrates ("Can view 应用", the custom
    # permission's name): stored text, not translated in either language (docs/console.md).
    names = [str(name) for _code, name in App._meta.permissions]
    stored = re.sub(r"Can (add|change|delete|view) ", " ", text)
    for name in names:
        stored = stored.replace(name, " ")
    assert english_left(stored, labels) == set()


@pytest.mark.parametrize(
    ("language", "message"),
    [("zh-hans", "已暂停 1 个应用。"), ("en", "1 app(s) suspended.")],
)
def test_an_action_reports_in_the_admins_language(
    every_row, root_client: Client, language: str, message: str
):
    from tenancy.models import App

    app = App.objects.get(slug="business")
    root_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    changelist = reverse("admin:tenancy_app_changelist")
    page = visible_text(root_client.get(changelist).content.decode())
    with override(language):
        description = str(admin.site._registry[App].suspend_apps.short_description)
    assert description in page  # the action is offered under its translated name
    response = root_client.post(
        changelist,
        {"action": "suspend_apps", "_selected_action": [str(app.pk)]},
        follow=True,
    )
    assert message in visible_text(response.content.decode())
    app.refresh_from_db()
    assert app.status == App.Status.SUSPENDED
