"""The console's server-rendered pages: navigation, the runs list, 运行详情 and its rules."""

import re
from datetime import timedelta

import pytest
from django.contrib.admin.utils import quote
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from guardian.shortcuts import remove_perm

from publication.models import BlockRevision
from runs.models import DeliveryAck, DeliveryLog, Run
from runtime.services import start_run
from tests import factories
from tests.console.conftest import ANSWER_STEPS, FORGED_ID

pytestmark = pytest.mark.django_db


def html(response) -> str:
    assert response.status_code == 200
    return response.content.decode()


# --- navigation and the runs list ---------------------------------------------------------


def test_home_lists_tenants_with_their_apps_and_pins(staff_client, researcher, outsider):
    factories.make_app(outsider.tenant_user.tenant, "globex-app")
    page = html(staff_client.get("/console/"))
    assert "Acme 资产管理" in page and "Globex" in page
    assert "/console/apps/business/debug/" in page and "/console/apps/globex-app/runs/" in page
    assert "researcher@1" in page


def test_the_console_speaks_chinese_by_default_and_english_on_request(staff_client, researcher):
    chinese = html(staff_client.get("/console/apps/business/debug/"))
    assert "运行调试" in chinese and "回答来源区" in chinese and 'lang="zh-hans"' in chinese
    response = staff_client.post("/i18n/setlang/", {"language": "en", "next": "/console/"})
    assert response.status_code == 302
    english = html(staff_client.get("/console/apps/business/debug/"))
    assert 'lang="en"' in english
    assert "Run debugging" in english and "Answer sources" in english
    assert "运行调试" not in english
    # the page script's strings come from the same catalog
    assert "View source excerpt" in english and "You may no longer view this source" in english


@pytest.fixture
def many_runs(app, researcher, alice, bob):
    """30 queued runs over three days: alice's and bob's, some failed."""
    now = timezone.now()
    runs = []
    for i in range(30):
        run = start_run(
            user=alice if i % 3 else bob, app=app, agent_key="researcher", input=f"问题 {i}"
        )
        Run.objects.filter(pk=run.pk).update(
            created_at=now - timedelta(hours=i * 2), status="FAILED" if i % 5 == 0 else "COMPLETED"
        )
        runs.append(run)
    return runs


def count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def next_page(page: str) -> str:
    """The query of the page's 下一页 link (the signed cursor and the filters)."""
    return re.search(r'rel="next" href="\?([^"]+)"', page).group(1).replace("&amp;", "&")


def test_the_runs_list_costs_the_same_queries_for_any_page_size(staff_client, many_runs):
    for scope in ("/console/apps/business/runs/", "/console/runs/", "/console/tenants/acme/runs/"):
        small = count_queries(staff_client, f"{scope}?per=10")
        assert count_queries(staff_client, f"{scope}?per=100") == small, scope
        second = next_page(html(staff_client.get(f"{scope}?per=10")))
        assert count_queries(staff_client, f"{scope}?{second}") == small, scope


def test_the_runs_list_paginates(staff_client, many_runs):
    first = html(staff_client.get("/console/apps/business/runs/?per=10"))
    assert first.count('class="run-link"') == 10
    second = html(staff_client.get(f"/console/apps/business/runs/?{next_page(first)}"))
    last = html(staff_client.get(f"/console/apps/business/runs/?{next_page(second)}"))
    assert last.count('class="run-link"') == 10
    assert "问题 29" in last and "问题 0<" not in last
    assert 'rel="next"' not in last


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("status=FAILED", 6),
        ("owner=bob", 10),
        ("owner=bob&status=FAILED", 2),
        ("agent=researcher", 30),
        ("agent=nobody", 30),  # not a choice: ignored, never an error page
    ],
)
def test_the_runs_list_filters(staff_client, many_runs, query, expected):
    page = html(staff_client.get(f"/console/apps/business/runs/?per=100&{query}"))
    assert page.count('class="run-link"') == expected


def test_the_runs_list_filters_by_time_range(staff_client, many_runs, settings):
    """Days are read on the console's clock, the display zone its pages show times in."""
    with timezone.override(settings.SPARKTIDE_DISPLAY_TIME_ZONE):
        today = timezone.localdate()
        expected = Run.objects.filter(created_at__date=today).count()
    page = html(
        staff_client.get(f"/console/apps/business/runs/?per=100&since={today}&until={today}")
    )
    assert 0 < expected < 30
    assert page.count('class="run-link"') == expected


def test_a_tenants_runs_list_shows_only_that_tenant(staff_client, many_runs, outsider):
    other_app = factories.make_app(outsider.tenant_user.tenant, "globex-app", members=[outsider])
    factories.make_agent(
        outsider.tenant_user.tenant,
        "helper",
        model=factories.scripted(*ANSWER_STEPS),
        pin_to=[other_app],
    )
    foreign = start_run(user=outsider, app=other_app, agent_key="helper", input="外部问题")
    acme = html(staff_client.get("/console/tenants/acme/runs/?per=100"))
    assert acme.count('class="run-link"') == 30 and foreign.pk not in acme
    globex = html(staff_client.get("/console/tenants/globex/runs/"))
    assert foreign.pk in globex and globex.count('class="run-link"') == 1


# --- 运行详情 ---------------------------------------------------------------------------


@pytest.fixture
def run(researcher, make_run):
    return make_run()


def test_run_detail_shows_status_blocks_revisions_attempts_and_sources(staff_client, run):
    page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    assert "已完成" in page and run.pk in page
    # the revised block: current body with a chip for the verified source, and r1 in its history
    assert "北辰医药三季度营收同比增长 12%" in page
    assert "北辰医药三季度营收增长 " in page  # r1's body, through the reader
    assert page.count('class="cite-chip is-verified" href="#source-') >= 2
    assert "修订历史 2" in page
    assert "已保存" in page and "已消耗" in page  # outcome and quota of the revision
    # 回答来源区: two verified sources with knowledge@version and page/locator, the forged one apart
    assert page.count('data-action="preview" data-citation-id=') >= 2
    assert "fund-reports@2026-10" in page and "第 1 页" in page and "位置 0–" in page
    unverified = page.split("来源未核验</h3>")[1]
    assert FORGED_ID in unverified and "<button" not in unverified.split("</ul>")[0]


def test_run_detail_links_the_runs_admin_page_with_its_id_quoted_for_the_admin(staff_client, run):
    """The admin reads ``_XX`` in a path as a quoted character: a run ID such as
    ``run_22…`` written raw opened "doesn't exist" (a redirect to the admin's index).
    The link carries the ID as the admin quotes it, and opens the run's page."""
    page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    [href] = re.findall(r'<a href="([^"]+)" data-admin-link>', page)
    assert href == reverse("admin:runs_run_change", args=[quote(run.pk)])
    assert staff_client.get(href).status_code == 200


def test_run_detail_lists_the_event_log_through_the_reader_and_the_journal(staff_client, run):
    page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    for kind in (
        "run.started",
        "citation.created",
        "answer.preview",
        "answer.published",
        "citation.verified",
        "run.completed",
    ):
        assert kind in page
    assert "search_knowledge" in page and "send_answer_part" in page


def test_run_detail_journal_shows_no_answer_body(staff_client, run):
    """The runtime journal holds candidate bodies; only the reader may show bodies."""
    page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    journal = page.split('id="journal"')[1].split('id="delivery"')[0]
    assert "同比增长" not in journal and "研发投入" not in journal and "营收增长" not in journal
    assert "redactedChars" in journal


def test_a_revoked_source_protects_the_block_in_every_revision(staff_client, run, alice, knowledge):
    """After the memo's ACL is revoked, block #2 (which cites it) shows 受保护 and no body —
    not in its current revision, not in history, not in the event log."""
    remove_perm("knowledge.read_document", alice, knowledge.private_doc)
    page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    assert "研发投入" not in page
    assert "受保护" in page
    # the other block is unaffected
    assert "北辰医药三季度营收同比增长 12%" in page


def test_run_detail_query_count_does_not_grow_with_blocks(
    staff_client, app, knowledge, alice, make_run, django_assert_max_num_queries
):
    steps = [{"search": "营收", "topK": 2}]
    for i in range(6):
        steps.append({"answerPart": f"第 {i} 段 [[cite:{{{{c1}}}}]]"})
    for i in range(1, 4):
        steps.append(
            {"answerPart": f"第 {i} 段（修订） [[cite:{{{{c2}}}}]]", "replaces": f"{{{{p{i}}}}}"}
        )
    factories.make_agent(
        app.tenant, "long", model=factories.scripted(*steps), knowledge=[knowledge], pin_to=[app]
    )
    run = make_run(agent_key="long")
    assert run.block_count == 6 and BlockRevision.objects.filter(block__run=run).count() == 9
    for i in range(3):
        DeliveryLog.objects.create(run=run, connection_id=f"conn-{i}", last_sent_seq=run.last_seq)
        DeliveryAck.objects.create(
            run=run, connection_id=f"conn-{i}", seq=run.last_seq, kind="received"
        )
    with django_assert_max_num_queries(30):
        page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    assert page.count('class="block') >= 6
    # 检索记录 is part of that count: a fixed two queries (tests/console/test_searches_and_sources.py)
    assert page.count('class="search-hit') == 2
    small = count_queries(staff_client, f"/console/runs/{run.pk}/")

    factories.make_agent(
        app.tenant,
        "short",
        model=factories.scripted(*ANSWER_STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )
    short = make_run(agent_key="short")
    assert count_queries(staff_client, f"/console/runs/{short.pk}/") == small


def test_run_detail_shows_delivery_evidence_per_connection(staff_client, run):
    DeliveryLog.objects.create(
        run=run, connection_id="conn-a", client_id="console", last_sent_seq=run.last_seq
    )
    DeliveryAck.objects.create(run=run, connection_id="conn-a", seq=run.last_seq, kind="received")
    DeliveryAck.objects.create(
        run=run, connection_id="conn-a", seq=run.last_seq - 2, kind="rendered"
    )
    page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    delivery = page.split('id="delivery"')[1]
    assert "conn-a" in delivery
    assert f"{run.last_seq} / {run.last_seq}" in delivery
    assert f"{run.last_seq - 2} / {run.last_seq}" in delivery


def test_run_detail_shows_a_connection_closed_by_the_sweep_as_its_server_lost(staff_client, run):
    from django.utils import timezone

    DeliveryLog.objects.create(
        run=run, connection_id="conn-dead", closed_at=timezone.now(), abandoned=True
    )
    DeliveryLog.objects.create(run=run, connection_id="conn-done", closed_at=timezone.now())
    delivery = html(staff_client.get(f"/console/runs/{run.pk}/")).split('id="delivery"')[1]
    rows = {row.split("</tr>")[0] for row in delivery.split("<tr>")[1:]}
    dead = next(row for row in rows if "conn-dead" in row)
    done = next(row for row in rows if "conn-done" in row)
    assert "data-abandoned" in dead and "服务器已失联" in dead
    assert "data-abandoned" not in done


def test_a_failed_run_shows_its_terminal_reason(staff_client, app, knowledge, make_run):
    factories.make_agent(
        app.tenant,
        "flaky",
        model=factories.scripted({"answerPart": "先写一段。"}, {"fail": "模型崩溃"}),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = make_run(agent_key="flaky")
    page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    assert run.status == "PARTIAL" and "部分完成" in page
    assert "PROVIDER_FAILED" in page and "模型崩溃" in page
    assert "先写一段。" in page  # the earlier commit stays


def test_run_detail_hands_the_display_time_zone_to_its_script(staff_client, run, settings):
    """Times are shown in SPARKTIDE_DISPLAY_TIME_ZONE; the page tells its script which."""
    assert 'data-time-zone="Asia/Shanghai"' in html(staff_client.get(f"/console/runs/{run.pk}/"))
    settings.SPARKTIDE_DISPLAY_TIME_ZONE = "Europe/Berlin"
    assert 'data-time-zone="Europe/Berlin"' in html(staff_client.get(f"/console/runs/{run.pk}/"))


def test_the_source_dialog_has_a_label_for_every_code_the_preview_can_return():
    """The console renders preview failures through their codes, one label each, in both
    languages; a code the endpoint documents but the dialog cannot name would show raw."""
    from django.utils import translation

    from api.citations import PREVIEW_ERRORS
    from console.labels import PREVIEW_ERROR

    codes = {str(code) for code, _ in PREVIEW_ERRORS}
    assert codes <= set(PREVIEW_ERROR), codes - set(PREVIEW_ERROR)
    with translation.override("en"):
        english = {code: str(PREVIEW_ERROR[code]) for code in codes}
    with translation.override("zh-hans"):
        chinese = {code: str(PREVIEW_ERROR[code]) for code in codes}
    assert [code for code in codes if english[code] == chinese[code]] == []


# --- one clock, codes in words, counts that count what they say ----------------------------


def test_every_console_page_shows_times_on_the_display_clock_and_names_it(staff_client, run):
    """The runs list and 运行详情 render the same instant on one clock, the display zone,
    and say which (SPARKTIDE_DISPLAY_TIME_ZONE; storage and the API stay UTC)."""
    at = timezone.datetime(2026, 12, 5, 8, 3, 54, tzinfo=timezone.UTC)
    Run.objects.filter(pk=run.pk).update(created_at=at)
    listed = html(staff_client.get("/console/apps/business/runs/"))
    detail = html(staff_client.get(f"/console/runs/{run.pk}/"))
    assert "2026-12-05 16:03:54" in listed and "08:03:54" not in listed
    assert "创建时间（Asia/Shanghai）" in listed
    assert "2026-12-05 16:03:54" in detail and "时间按 Asia/Shanghai 显示" in detail


def test_the_runs_list_date_filter_reads_days_on_the_display_clock(staff_client, run):
    """A run created at 20:00 UTC on 4 December is on 5 December in Shanghai: it is listed
    for that day, the day the page shows it on."""
    at = timezone.datetime(2026, 12, 4, 20, 0, tzinfo=timezone.UTC)
    Run.objects.filter(pk=run.pk).update(created_at=at)
    day = html(staff_client.get("/console/apps/business/runs/?since=2026-12-05&until=2026-12-05"))
    before = html(
        staff_client.get("/console/apps/business/runs/?since=2026-12-04&until=2026-12-04")
    )
    assert run.pk in day and run.pk not in before


def test_a_runs_end_reason_is_shown_in_words_with_its_code_on_hover(staff_client, run):
    Run.objects.filter(pk=run.pk).update(status="CANCELLED", reason="CANCELLED_BY_USER")
    for page in (
        html(staff_client.get("/console/apps/business/runs/")),
        html(staff_client.get(f"/console/runs/{run.pk}/")),
    ):
        assert 'title="CANCELLED_BY_USER">用户取消<' in page
        assert ">CANCELLED_BY_USER<" not in page


def test_a_reason_that_is_an_error_code_is_named_by_the_errors_detail(staff_client, run):
    Run.objects.filter(pk=run.pk).update(status="FAILED", reason="KNOWLEDGE_SOURCE_ERROR")
    page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    from foundation.errors import ErrorCode

    detail = str(ErrorCode.KNOWLEDGE_SOURCE_ERROR.default_detail)
    assert f'title="KNOWLEDGE_SOURCE_ERROR">{detail}<' in page


def test_run_detail_counts_cited_sources_apart_from_retrieved_ones(staff_client, run):
    """Two sources retrieved and both cited, one forged ID: 2 verified / 1 unverified, and
    the two retrieved counted on their own line — not "2 / 2" of blocks and issued IDs."""
    page = html(staff_client.get(f"/console/runs/{run.pk}/"))
    assert re.search(r'data-count="blocks">\s*2\s*<', page)
    assert re.search(r'data-count="cited">\s*2 / 1\s*<', page)
    assert re.search(r'data-count="retrieved">\s*2\s*<', page)


def test_the_attempts_table_names_the_entry_and_the_outcome_in_words(staff_client, run):
    attempts = html(staff_client.get(f"/console/runs/{run.pk}/")).split(
        'class="list compact attempts"'
    )[1]
    assert "回答片段工具" in attempts and 'title="COMMITTED"' in attempts
    assert '<td class="mono">B</td>' not in attempts
