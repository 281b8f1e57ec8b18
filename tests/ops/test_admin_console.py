"""The Django admin as an operator's console: runs, answer blocks, revisions, attempts and
citation references read-only; model names in Chinese with the English catalog; the token
form picks a business user by name, never by row ID; the console and the admin link to
each other; a DRAFT version takes uploaded files."""

import re

import pytest
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from agents.models import Agent, AgentVersion
from citations.models import CitationReference, NumericHandle
from knowledge.models import Knowledge, KnowledgeVersion, Lease
from publication.models import AnswerBlock, BlockRevision, PublicationAttempt
from runs.models import AgentCall, JournalEntry, Run, RunEvent
from tenancy.models import ApiToken, App
from tests.ops.pdfs import make_pdf
from tests.ops.test_documents import write_docx

READ_ONLY = [
    Run,
    AgentCall,
    RunEvent,
    JournalEntry,
    AnswerBlock,
    BlockRevision,
    PublicationAttempt,
    CitationReference,
    NumericHandle,
]


@pytest.fixture
def staff(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def finished(make_run):
    return make_run({"search": "营收"}, {"answerPart": "营收增长 12% [[cite:{{c1}}]]"})


def url(model, view, *args):
    # Object IDs as the admin quotes them: a raw "run_22…" reads as 'run"…' there.
    return reverse(
        f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}",
        args=[quote(arg) for arg in args],
    )


def one_of(model, run):
    lookup = {"block__run": run} if model is BlockRevision else {"run": run}
    if model is Run:
        return run
    return model.objects.filter(**lookup).first()


@pytest.mark.parametrize("model", READ_ONLY, ids=lambda m: m.__name__)
def test_platform_records_are_registered_and_read_only(staff, finished, model):
    assert admin.site.is_registered(model)
    assert staff.get(url(model, "changelist")).status_code == 200
    assert staff.get(url(model, "add")).status_code == 403
    obj = one_of(model, finished)
    if obj is None:  # this run made no numeric handle
        assert model is NumericHandle
        return
    page = staff.get(url(model, "change", obj.pk))
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert staff.post(url(model, "change", obj.pk), {}).status_code == 403
    assert staff.get(url(model, "delete", obj.pk)).status_code == 403
    before = model.objects.count()
    staff.post(
        url(model, "changelist"),
        {"action": "delete_selected", "_selected_action": [obj.pk], "post": "yes"},
    )
    assert model.objects.count() == before


@pytest.mark.parametrize(
    ("model", "chinese", "english"),
    [
        (Run, "运行", "Runs"),
        (AnswerBlock, "回答块", "Answer blocks"),
        (BlockRevision, "块修订", "Block revisions"),
        (PublicationAttempt, "发布尝试", "Publication attempts"),
        (CitationReference, "引用", "Citation references"),
    ],
)
def test_model_names_are_chinese_with_an_english_catalog(staff, model, chinese, english):
    page = staff.get(url(model, "changelist")).content.decode()
    assert f"<h1>选择 {chinese}" in page or chinese in page
    english_page = staff.get(url(model, "changelist"), headers={"Accept-Language": "en"})
    assert english in english_page.content.decode()


def test_the_token_form_picks_a_business_user_by_tenant_and_name(staff, alice, bob, outsider):
    page = staff.get(reverse("admin:tenancy_apitoken_add")).content.decode()
    assert "vForeignKeyRawIdAdminField" not in page
    assert '<select name="user"' in page
    assert f'<option value="{alice.pk}">acme / alice</option>' in page
    assert "globex / mallory" in page
    select = page.split('<select name="user"', 1)[1].split("</select>", 1)[0]
    labels = re.findall(r'<option value="\d+">([^<]+)</option>', select)
    assert sorted(labels) == ["acme / alice", "acme / bob", "globex / mallory"]  # no staff


def test_the_console_and_the_admin_link_to_each_other(staff, finished):
    admin_page = staff.get(url(Run, "change", finished.pk)).content.decode()
    console_url = reverse("console:run", args=[finished.pk])
    assert f'href="{console_url}"' in admin_page
    assert f"?run__id__exact={finished.pk}" in admin_page
    console_page = staff.get(console_url).content.decode()
    assert f'href="{url(Run, "change", finished.pk)}"' in console_page


@pytest.fixture
def draft(tenant):
    knowledge = Knowledge.objects.create(tenant=tenant, key="uploads", type="MANAGED")
    return KnowledgeVersion.objects.create(knowledge=knowledge, version="1")


def upload(staff, version, name, content, **fields):
    return staff.post(
        reverse("admin:knowledge_knowledgeversion_upload", args=[version.pk]),
        {"file": SimpleUploadedFile(name, content), **fields},
    )


def test_a_draft_version_takes_an_uploaded_docx_as_a_document(staff, draft, tmp_path):
    page = staff.get(url(KnowledgeVersion, "change", draft.pk)).content.decode()
    upload_url = reverse("admin:knowledge_knowledgeversion_upload", args=[draft.pk])
    assert f'href="{upload_url}"' in page
    assert staff.get(upload_url).status_code == 200
    path = write_docx(tmp_path / "xinghe.docx")
    response = upload(staff, draft, "xinghe.docx", path.read_bytes(), key="quarterly")
    assert response.status_code == 302
    document = draft.documents.get(key="quarterly")
    assert document.title == "星河基金季报" and document.page_count == 2
    assert document.chunks.get(text__contains="北极星").page == 2
    draft.refresh_from_db()
    assert draft.status == KnowledgeVersion.Status.DRAFT  # publishing stays an explicit act


def test_an_uploaded_scanned_pdf_is_refused_with_the_reason(staff, draft):
    response = upload(staff, draft, "scan.pdf", make_pdf([[]]))
    assert response.status_code == 200
    assert "OCR" in response.content.decode()
    assert not draft.documents.exists()


def test_a_published_version_takes_no_upload(staff, draft):
    draft.status = KnowledgeVersion.Status.PUBLISHED
    draft.save()
    response = upload(staff, draft, "a.txt", "正文。".encode())
    assert response.status_code == 403
    page = staff.get(url(KnowledgeVersion, "change", draft.pk)).content.decode()
    assert "/upload/" not in page


def test_an_uploaded_text_file_keeps_its_pages(staff, draft):
    response = upload(staff, draft, "notes.txt", "第一页。\f第二页。".encode(), title="笔记")
    assert response.status_code == 302
    document = draft.documents.get(key="notes")
    assert document.title == "笔记" and document.page_count == 2


def test_no_answer_body_leaves_the_store_through_the_admin(staff, finished):
    """Bodies leave only through the reader (the console's 运行详情); the admin shows the
    records around them — revision, attempt, journal step, agent call — never the text."""
    body = "营收增长 12%"
    revision = BlockRevision.objects.get(block__run=finished)
    assert body in revision.content["text"]  # it is there, in the store
    pages = [
        url(BlockRevision, "change", revision.pk),
        url(AnswerBlock, "change", revision.block_id),
        url(PublicationAttempt, "change", PublicationAttempt.objects.filter(run=finished)[0].pk),
        url(AgentCall, "change", AgentCall.objects.filter(run=finished)[0].pk),
        url(Run, "change", finished.pk),
        url(JournalEntry, "changelist") + f"?run__id__exact={finished.pk}",
    ]
    pages += [url(JournalEntry, "change", e.pk) for e in JournalEntry.objects.filter(run=finished)]
    for page in pages:
        response = staff.get(page)
        assert response.status_code == 200, page
        assert body not in response.content.decode(), page


@pytest.mark.parametrize(
    ("model", "chinese", "singular", "plural"),
    [
        (Agent, "智能体", "agent", "Agents"),
        (AgentVersion, "智能体版本", "agent version", "Agent versions"),
        (Knowledge, "知识库", "knowledge base", "Knowledge bases"),
        (KnowledgeVersion, "知识库版本", "knowledge version", "Knowledge versions"),
        (Lease, "访问租约", "lease", "Leases"),
        (App, "应用", "app", "Apps"),
        (ApiToken, "API 令牌", "API token", "API tokens"),
    ],
)
def test_operator_model_names_are_chinese_with_an_english_catalog(
    staff, model, chinese, singular, plural
):
    def title(response) -> str:
        return re.search(r"<title>(.*?)</title>", response.content.decode(), re.S).group(1)

    assert title(staff.get(url(model, "changelist"))).startswith(f"选择 {chinese} 来修改")
    # Django's "Select %s to change" takes the singular; the index lists the plural.
    english_page = staff.get(url(model, "changelist"), headers={"Accept-Language": "en"})
    assert title(english_page).startswith(f"Select {singular} to change")
    index = staff.get(reverse("admin:index"), headers={"Accept-Language": "en"}).content.decode()
    assert f">{plural}</a>" in index


def test_admin_action_labels_are_chinese_with_an_english_catalog(staff, app):
    labels = ("暂停所选应用", "启用所选应用", "提升安全策略版本号", "提升知识访问版本号")
    english = (
        "Suspend the selected apps",
        "Activate the selected apps",
        "Bump the security policy epoch",
        "Bump the knowledge access epoch",
    )
    page = staff.get(url(App, "changelist")).content.decode()
    for label in labels:
        assert f">{label}</option>" in page, label
    for label in english:
        assert label not in page
    english_page = staff.get(url(App, "changelist"), headers={"Accept-Language": "en"})
    for label in english:
        assert f">{label}</option>" in english_page.content.decode(), label
    for label in labels:
        assert label not in english_page.content.decode()
