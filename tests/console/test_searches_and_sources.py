"""运行详情 and 运行调试 show each search's work (检索记录) and what a source's state allows now."""

import json
import re

import pytest
from django.db import connection
from django.db.models import F
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from guardian.shortcuts import remove_perm
from playwright.sync_api import expect

from api.selectors import run_searches
from console import detail
from knowledge.models import KnowledgeVersion, Lease
from tenancy.models import App
from tests import factories
from tests.console.conftest import REPORT_PAGES, screenshot
from tests.factories import MEMO_PAGES

pytestmark = pytest.mark.django_db

REPORT_TITLE = "北辰医药 2026 年三季度报告"
MEMO_TITLE = "内部投研纪要"
# One search with two hits (both report pages); the answer cites only the first.
ONE_CITED_STEPS = (
    {"search": "北辰医药 营收 毛利率", "topK": 2},
    {"answerPart": "北辰医药三季度营收增长 12% [[cite:{{c1}}]]。"},
)


def html(response) -> str:
    assert response.status_code == 200
    return response.content.decode()


def panel(page: str) -> str:
    return page.split('id="searches"')[1].split("</section>")[0]


def rows(section: str) -> dict[str, str]:
    """Each hit row of a 检索记录 section, by its citation ID."""
    return dict(
        re.findall(
            r'<tr class="search-hit[^"]*" data-citation-id="([^"]+)"(.*?)</tr>', section, re.S
        )
    )


def excerpts() -> list[str]:
    return [text for page in REPORT_PAGES + MEMO_PAGES for text in page.split("\n\n")]


@pytest.fixture
def one_cited(app, knowledge, make_run):
    factories.make_agent(
        app.tenant,
        "one",
        model=factories.scripted(*ONE_CITED_STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )
    return make_run(agent_key="one")


# --- 1. 检索记录 ------------------------------------------------------------------------------


def test_run_detail_shows_the_report_period_a_search_asked(staff_client, app, knowledge, make_run):
    factories.make_agent(
        app.tenant,
        "period",
        model=factories.scripted({"search": "北辰医药2026年三季度营收", "topK": 2}),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = make_run(agent_key="period")
    [search] = run_searches(run)
    assert search["periods"] == {"asked": ["2026", "Q3"], "ranked_last": 0}

    section = panel(html(staff_client.get(f"/console/runs/{run.pk}/")))

    periods = section.split('data-role="periods">')[1].split("</dd>")[0]
    assert re.findall(r'<code class="chip-static">([^<]+)</code>', periods) == ["2026", "Q3"]


def test_run_detail_shows_each_search_with_its_hits_marked_cited_or_unused(staff_client, one_cited):
    [search] = run_searches(one_cited)
    cited, unused = search["hits"]
    assert cited["cited"] and not unused["cited"]
    section = panel(html(staff_client.get(f"/console/runs/{one_cited.pk}/")))
    assert "检索记录" in html(staff_client.get(f"/console/runs/{one_cited.pk}/"))
    by_id = rows(section)
    assert list(by_id) == [cited["citationId"], unused["citationId"]]
    assert 'data-cited="true"' in by_id[cited["citationId"]]
    assert "已引用" in by_id[cited["citationId"]] and "未使用" not in by_id[cited["citationId"]]
    assert 'data-cited="false"' in by_id[unused["citationId"]]
    assert "未使用" in by_id[unused["citationId"]] and "已引用" not in by_id[unused["citationId"]]
    for hit, row in ((cited, by_id[cited["citationId"]]), (unused, by_id[unused["citationId"]])):
        assert REPORT_TITLE in row and f">{hit['page']}<" in row
        assert f"{hit['score']:.3f}" in row
    # what was searched: the terms, the version asked, no refusals
    assert "fund-reports@2026-10" in section
    for term in search["terms"]:
        assert f'<code class="chip-static">{term}</code>' in section
    assert "没有被排除的版本或片段" in section
    # titles, pages and scores only: no excerpt's text
    for text in excerpts():
        assert text not in section


def test_a_search_the_acl_narrowed_shows_the_count_never_the_memo(
    staff_client, app, knowledge, bob, make_run
):
    """bob may not read the memo: the search says one chunk was kept out, and nothing of it."""
    factories.make_agent(
        app.tenant,
        "memo",
        model=factories.scripted({"search": "投研纪要", "topK": 3}, {"answerPart": "没有找到。"}),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = make_run(owner=bob, agent_key="memo")
    section = panel(html(staff_client.get(f"/console/runs/{run.pk}/")))
    assert "文档权限排除的片段 1 个" in section
    assert MEMO_TITLE not in section and MEMO_PAGES[0] not in section


def test_the_search_panel_costs_a_fixed_number_of_queries(
    staff_client, app, knowledge, make_run, one_cited
):
    """Two queries (the searches and the current citations) whatever the number of searches
    and hits; 运行详情 costs the same for one search of two hits as for four of six."""
    # The same answer as ``one_cited``'s (its first search, its c1), after three more searches.
    many = [ONE_CITED_STEPS[0], *({"search": q, "topK": 6} for q in ("营收", "纪要", "北辰医药"))]
    many.append(ONE_CITED_STEPS[1])
    factories.make_agent(
        app.tenant, "many", model=factories.scripted(*many), knowledge=[knowledge], pin_to=[app]
    )
    run = make_run(agent_key="many")
    assert len(run_searches(run)) == 4
    events = [{"type": "citation.created", "data": {}}]
    with CaptureQueriesContext(connection) as panel_queries:
        detail.search_panels(run, events)
    assert len(panel_queries) == 2

    def page_queries(run_id: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            html(staff_client.get(f"/console/runs/{run_id}/"))
        return len(queries)

    assert page_queries(run.pk) == page_queries(one_cited.pk)


def test_the_debug_pages_search_fragment_is_the_run_details_panel(staff_client, one_cited):
    fragment = html(staff_client.get(f"/console/runs/{one_cited.pk}/searches/"))
    page = html(staff_client.get(f"/console/runs/{one_cited.pk}/"))
    assert rows(panel(fragment)) == rows(panel(page)) and len(rows(panel(page))) == 2
    assert staff_client.get("/console/runs/run_doesnotexist/searches/").status_code == 404
    # staff only: a member's session is sent to the console's login
    anonymous = Client().get(f"/console/runs/{one_cited.pk}/searches/")
    assert anonymous.status_code == 302 and "/console/login/" in anonymous["Location"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.browser
@pytest.mark.slow
def test_run_detail_and_debugging_show_the_search_rows_in_chromium(
    signed_in, app, knowledge, alice
):
    factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*ONE_CITED_STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )
    page = signed_in
    page.goto("/console/apps/business/debug/")
    page.fill("#owner-token", alice.raw_token)
    page.fill("#question", "北辰医药营收如何？")
    page.click("#start")
    hits = page.locator("#debug-searches .search-hit")
    expect(hits).to_have_count(2, timeout=20_000)
    expect(page.locator("#debug-searches .search-hit[data-cited=true]")).to_have_count(1)
    expect(hits.nth(0)).to_contain_text("已引用")
    expect(hits.nth(1)).to_contain_text("未使用")
    expect(page.locator("#debug-searches")).to_contain_text(REPORT_TITLE)

    page.click("#run-link")
    section = page.locator("#searches")
    expect(section.locator("h2")).to_have_text("检索记录")
    rows = section.locator(".search-hit")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text(REPORT_TITLE)
    expect(rows.nth(0).locator("[data-role=cited]")).to_have_text("已引用")
    expect(rows.nth(1).locator("[data-role=unused]")).to_have_text("未使用")
    expect(section).not_to_contain_text("毛利率保持稳定")
    section.scroll_into_view_if_needed()
    screenshot(page, "run-detail-searches", full_page=False)


# --- 3. one paragraph number for a citation ---------------------------------------------------

# The report's first page has two paragraphs; the answer cites the second one's sentence.
SECOND_PARAGRAPH_STEPS = (
    {"search": "北辰医药 研发投入", "topK": 1},
    {"answerPart": "公司研发投入同比增加 [[cite:{{c1}}]]。"},
)


def test_the_event_log_and_the_source_dialog_name_the_same_paragraph(
    staff_client, app, knowledge, alice, make_run
):
    """The excerpt begins at paragraph 1 of page 1; the answer cites its paragraph 2. The
    preview's ``location`` and the event log's citation.created summary both say 第 2 段."""
    factories.make_agent(
        app.tenant,
        "second",
        model=factories.scripted(*SECOND_PARAGRAPH_STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = make_run(agent_key="second")
    [reference] = run.citations.all()
    assert reference.chunk.paragraph == 1
    preview = factories.client_for(alice).get(
        f"/v1/apps/{app.slug}/runs/{run.pk}/citations/{reference.pk}/preview"
    )
    assert preview.status_code == 200, preview.content
    assert preview.json()["location"] == {"page": 1, "paragraph": 2}
    page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    events = page.split('id="events"')[1].split('id="journal"')[0]
    [row] = [r for r in events.split("<tr>") if "citation.created" in r]
    assert "第 1 页 · 第 2 段" in row and "第 1 段" not in row


def test_a_citation_the_answer_does_not_cite_is_at_the_paragraph_its_excerpt_begins(
    staff_client, one_cited, alice
):
    cited, unused = (hit["citationId"] for hit in run_searches(one_cited)[0]["hits"])
    preview = factories.client_for(alice).get(
        f"/v1/apps/business/runs/{one_cited.pk}/citations/{unused}/preview"
    )
    page = html(staff_client.get(f"/console/runs/{one_cited.pk}/"))
    events = page.split('id="events"')[1].split('id="journal"')[0]
    [row] = [r for r in events.split("<tr>") if "citation.created" in r and unused in r]
    location = preview.json()["location"]
    assert f"第 {location['page']} 页 · 第 {location['paragraph']} 段" in row


# --- 4. a source the app may no longer use shows a disabled 查看来源片段 with the reason ------


def sources_section(page: str) -> str:
    return page.split('id="sources"')[1].split("</section>")[0]


def preview(user, run, citation_id):
    return factories.client_for(user).get(
        f"/v1/apps/{run.app.slug}/runs/{run.pk}/citations/{citation_id}/preview"
    )


@pytest.fixture
def answered(researcher, make_run):
    """The console's usual run: c1 the report, c2 the memo, both verified."""
    return make_run()


def test_a_revoked_lease_disables_the_sources_button_with_the_reason(
    staff_client, answered, alice, app, knowledge
):
    verified = [s.id for s in detail.run_detail(answered).sources.verified]
    assert len(verified) == 2
    before = sources_section(html(staff_client.get(f"/console/runs/{answered.pk}/")))
    assert before.count('data-action="preview"') == 2 and "disabled" not in before
    assert preview(alice, answered, verified[0]).status_code == 200

    Lease.objects.filter(app=app, version=knowledge).update(revoked_at=timezone.now())
    section = sources_section(html(staff_client.get(f"/console/runs/{answered.pk}/")))
    assert 'data-action="preview"' not in section
    assert section.count("disabled") == 2
    for citation_id in verified:
        assert f'data-citation-id="{citation_id}" data-refusal="no_current_lease"' in section
    assert section.count("应用对该知识版本的使用租约已失效或被收回") == 2
    # the click still re-checks on the server: the preview is refused
    refused = preview(alice, answered, verified[0])
    assert refused.status_code == 503 and refused.json()["code"] == "CAPABILITY_UNAVAILABLE"


def test_a_revoked_version_says_so_and_the_preview_refuses_it(
    staff_client, answered, alice, knowledge
):
    knowledge.status = KnowledgeVersion.Status.REVOKED
    knowledge.save()
    section = sources_section(html(staff_client.get(f"/console/runs/{answered.pk}/")))
    assert 'data-action="preview"' not in section
    assert section.count('data-refusal="not_published"') == 2
    assert "该知识版本已撤销" in section
    citation_id = detail.run_detail(answered).sources.verified[0].id
    refused = preview(alice, answered, citation_id)
    assert refused.status_code == 409 and refused.json()["code"] == "CAPABILITY_UNAVAILABLE"


def test_after_a_policy_change_the_answers_chips_and_sources_say_why_not(
    staff_client, answered, alice, app
):
    """The app's security policy changed since the run: the answer stays readable, but no
    source may be previewed — its chips and its 回答来源区 buttons are disabled with the reason."""
    App.objects.filter(pk=app.pk).update(security_policy_epoch=F("security_policy_epoch") + 1)
    page = html(staff_client.get(f"/console/runs/{answered.pk}/"))
    answer = page.split('id="answer"')[1].split('id="sources"')[0]
    chips = re.findall(r'<a class="cite-chip is-verified[^>]*>', answer)
    assert chips and all(
        "is-unavailable" in chip and 'data-refusal="SECURITY_POLICY_CHANGED"' in chip
        for chip in chips
    )
    assert "应用的安全策略已变化" in chips[0]
    section = sources_section(page)
    assert 'data-action="preview"' not in section
    assert section.count('data-refusal="SECURITY_POLICY_CHANGED"') == 2
    # the page script's data: each verified source says it is unavailable, and why
    sources = json.loads(page.split('id="run-sources" type="application/json">')[1].split("<")[0])
    assert {s["unavailable"]["code"] for s in sources} == {"SECURITY_POLICY_CHANGED"}
    # the event log shows the events' own data, unchanged
    events = page.split('id="events"')[1].split('id="journal"')[0]
    assert "citation.created" in events and "unavailable" not in events
    citation_id = sources[0]["id"]
    refused = preview(alice, answered, citation_id)
    assert refused.status_code == 409 and refused.json()["code"] == "SECURITY_POLICY_CHANGED"


def test_a_document_the_owner_may_no_longer_read_disables_only_its_source(
    staff_client, answered, alice, knowledge
):
    memo, report = knowledge.private_doc, knowledge.public_doc
    remove_perm("knowledge.read_document", alice, memo)
    entries = {s.citation["documentId"]: s for s in detail.run_detail(answered).sources.verified}
    assert entries[memo.key].refusal == "document_not_readable"
    assert entries[report.key].refusal == ""
    section = sources_section(html(staff_client.get(f"/console/runs/{answered.pk}/")))
    assert section.count('data-action="preview"') == 1
    assert f'data-action="preview" data-citation-id="{entries[report.key].id}"' in section
    assert "运行所有者已无权阅读该文档" in section
    refused = preview(alice, answered, entries[memo.key].id)
    assert refused.status_code == 403 and refused.json()["code"] == "KNOWLEDGE_ACCESS_DENIED"


@pytest.mark.django_db(transaction=True)
@pytest.mark.browser
@pytest.mark.slow
def test_run_detail_in_chromium_disables_the_chips_and_buttons_of_a_source_it_may_not_preview(
    signed_in, app, knowledge, finished_run
):
    factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*ONE_CITED_STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = finished_run()
    App.objects.filter(pk=app.pk).update(security_policy_epoch=F("security_policy_epoch") + 1)
    page = signed_in
    page.goto(f"/console/runs/{run.pk}/")
    chip = page.locator("#answer .cite-chip[data-state=verified]").first
    expect(chip).to_be_disabled()
    expect(chip).to_have_attribute("data-refusal", "SECURITY_POLICY_CHANGED")
    button = page.locator("#sources .source button").first
    expect(button).to_be_disabled()
    expect(page.locator("#sources [data-role=refusal]").first).to_contain_text(
        "应用的安全策略已变化"
    )
    expect(page.locator("#source-dialog")).not_to_be_visible()
    screenshot(page, "run-detail-source-unavailable", full_page=False)
