"""运行调试 in real headless Chromium, against daphne and a task worker."""

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from guardian.shortcuts import assign_perm, remove_perm
from playwright.sync_api import expect

from runs.models import Run
from tests import factories
from tests.console.conftest import FORGED_ID, screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.slow]

XSS_PAGE = "恶意片段开始 <img src=x onerror=window.__pwned=1> 与 <script>window.__pwned=2</script> 恶意片段结束"

STREAMING_STEPS = (
    {"search": "营收", "topK": 1},
    {"sleep": 0.3},
    {"answerPart": "北辰医药三季度营收增长 [[cite:{{c1}}]]。"},
    {"sleep": 1.2},
    {
        "answerPart": "北辰医药 2026 年三季度营收同比增长 12%，主要来自创新药销售 [[cite:{{c1}}]]。"
        f"另有未经核实的说法 [[cite:{FORGED_ID}]]。",
        "replaces": "{{p1}}",
    },
    {"sleep": 0.3},
    {"answerPart": "管理层预计四季度延续增长。"},
)
# The full picture for the screenshot: a revision, an unverified marker and a refused change.
SHOWCASE_STEPS = (
    *STREAMING_STEPS,
    {"answerPart": "改写一个不存在的区块。", "replaces": "pub_doesnotexist000000000000"},
)
MEMO_STEPS = (
    {"search": "投研纪要", "topK": 1},
    {"answerPart": "内部纪要显示营收预测上调 [[cite:{{c1}}]]。"},
)


def agent(app, knowledge, steps, *, version="1", pin=True, key="researcher"):
    return factories.make_agent(
        app.tenant,
        key,
        model=factories.scripted(*steps),
        knowledge=knowledge if isinstance(knowledge, list) else [knowledge],
        pin_to=[app] if pin else [],
        version=version,
    )


@pytest.fixture
def xss_knowledge(tenant, app):
    version = factories.make_knowledge(tenant, "notes", version="1")
    factories.add_document(version, [XSS_PAGE], key="xss", title="<b>标题</b> 片段")
    factories.publish(version)
    factories.lease(app, version)
    return version


def ask(
    page, token: str, question: str = "北辰医药三季度营收如何？", *, version: str | None = None
) -> None:
    page.goto("/console/apps/business/debug/")
    page.fill("#owner-token", token)
    if version is not None:
        page.select_option("#version", label=version)
    page.fill("#question", question)
    page.click("#start")


def wait_until_finished(page) -> None:
    expect(page.locator("#run-status")).to_have_class(
        re.compile("status-(completed|partial|failed|cancelled)"), timeout=20_000
    )


def test_a_run_started_from_debugging_streams_into_the_page(signed_in, app, knowledge, alice):
    """Blocks appear while the run is still running; the timeline, the refused change and the
    final check follow; 运行详情 then shows what was sent and what the page acknowledged."""
    agent(app, knowledge, SHOWCASE_STEPS)
    page = signed_in
    page.goto("/console/apps/business/debug/")
    page.fill("#owner-token", alice.raw_token)
    # Whose token it is only the server says: the page shows no guess.
    expect(page.locator("#token-owner")).to_contain_text("服务器验证")
    page.fill("#question", "北辰医药三季度营收如何？")
    page.click("#start")

    expect(page.locator("#blocks [data-publication-id]").first).to_be_visible()
    # Streaming, not a page of results at the end: the block is there before the run ends.
    expect(page.locator("#run-status")).to_have_class(re.compile("status-running"))
    expect(page.locator("#run-status")).to_have_class(
        re.compile("status-completed"), timeout=20_000
    )
    expect(page.locator("#timeline [data-type='run.completed']")).to_have_count(1)
    expect(page.locator("#timeline [data-type='answer.published']")).to_have_count(3)
    expect(page.locator("#timeline [data-type='citation.verified']")).to_have_count(1)
    expect(page.locator("#verification")).to_contain_text("已核验 1 个，未核验 1 个")
    expect(page.locator("#rejection-list")).to_contain_text("REPLACES_TARGET_INVALID")
    run = Run.objects.get()
    assert (run.owner, run.status, run.agent_version.version) == (alice, "COMPLETED", "1")
    expect(page.locator("#run-id")).to_have_text(run.pk)
    expect(page.locator("#run-link")).to_have_attribute("href", f"/console/runs/{run.pk}/")
    page.wait_for_timeout(1800)  # let the revision highlight fade for the screenshot
    screenshot(page, "debug-after-run")

    page.click("#run-link")
    expect(page.locator(".run-head")).to_contain_text(run.pk)
    delivery = page.locator("#delivery tbody tr").first
    expect(delivery).to_contain_text(f"{run.last_seq} / {run.last_seq}")  # sent it all
    screenshot(page, "run-detail")


def test_a_revision_replaces_its_block_in_place(signed_in, app, knowledge, alice):
    """r1 is shown, then r2 arrives in the very same DOM element with its badge changed."""
    agent(app, knowledge, STREAMING_STEPS)
    page = signed_in
    ask(page, alice.raw_token)
    first = page.locator("#blocks [data-publication-id]").first  # #1: blocks are in delivery order
    expect(first).to_be_visible()
    expect(first).to_have_attribute("data-revision", "1")
    expect(first.locator("[data-role=revision]")).to_have_text("r1")
    publication_id = first.get_attribute("data-publication-id")
    first.evaluate("node => node.setAttribute('data-probe', 'kept')")

    kept = page.locator("[data-probe=kept]")
    expect(kept).to_have_attribute("data-revision", "2", timeout=20_000)
    expect(kept.locator("[data-role=revision]")).to_have_text("r2")
    expect(kept).to_contain_text("同比增长 12%")
    expect(kept).to_have_attribute("data-publication-id", publication_id)
    expect(page.locator(f"#blocks [data-publication-id='{publication_id}']")).to_have_count(1)
    wait_until_finished(page)
    expect(kept.locator("[data-role=revision]")).to_have_text("r2")


def test_an_unverified_reference_is_listed_apart_without_a_button(signed_in, app, knowledge, alice):
    """The forged marker is a 来源未核验 chip in the answer and sits under 来源未核验, unclickable."""
    agent(app, knowledge, STREAMING_STEPS)
    page = signed_in
    ask(page, alice.raw_token)
    wait_until_finished(page)
    unverified = page.locator(f"#unverified-sources [data-citation-id='{FORGED_ID}']")
    expect(unverified).to_be_visible()
    expect(page.locator("#unverified-box")).to_contain_text("来源未核验")
    expect(unverified.locator("button, a")).to_have_count(0)
    expect(page.locator(f"[data-action=preview][data-citation-id='{FORGED_ID}']")).to_have_count(0)
    chip = page.locator(f"#blocks .cite-chip[data-citation-id='{FORGED_ID}']")
    expect(chip).to_have_attribute("data-state", "unverified")
    expect(chip).to_have_text("来源未核验")
    assert chip.evaluate("node => node.tagName") == "SPAN"
    expect(page.locator("#blocks")).not_to_contain_text("[[cite:")
    # The verified one is a chip and a listed source, both with a way to the excerpt.
    expect(page.locator("#verified-sources [data-action=preview]")).to_have_count(1)
    expect(page.locator("#blocks .cite-chip[data-state=verified]")).to_have_count(1)
    expect(page.locator("#blocks button.cite-chip")).to_have_count(1)


def test_viewing_a_verified_source_shows_its_excerpt_then_access_denied_after_revocation(
    signed_in, app, knowledge, alice
):
    """Each click re-authorizes: after the memo's ACL is revoked the next click is refused and
    no excerpt (old or new) is on screen."""
    agent(app, knowledge, MEMO_STEPS)
    page = signed_in
    ask(page, alice.raw_token, "内部纪要怎么说？")
    wait_until_finished(page)
    previews = []
    page.on(
        "request",
        lambda request: previews.append(request.url) if "/citations/" in request.url else None,
    )

    page.locator("#verified-sources [data-action=preview]").click()
    dialog = page.locator("#source-dialog")
    expect(dialog).to_be_visible()
    excerpt = dialog.locator("[data-role=excerpt]")
    expect(excerpt).to_have_text("内部投研纪要：北辰医药营收预测上调，仅限分析师阅读。")
    expect(dialog.locator("[data-role=meta]")).to_contain_text("fund-reports@2026-10")
    screenshot(page, "source-dialog", full_page=False)
    dialog.locator(".dialog-foot [data-action=close]").click()
    expect(dialog).to_be_hidden()
    expect(excerpt).to_have_text("")

    remove_perm("knowledge.read_document", alice, knowledge.private_doc)
    page.locator("#blocks .cite-chip[data-state=verified]").click()
    error = dialog.locator("[data-role=error]")
    expect(error).to_be_visible()
    expect(error).to_have_attribute("data-code", "KNOWLEDGE_ACCESS_DENIED")
    expect(error).to_contain_text("你已无权查看该来源")
    expect(excerpt).to_have_text("")
    expect(dialog.locator("[data-role=excerpt-box]")).to_be_hidden()
    assert len(previews) == 2  # one request per click, nothing cached
    screenshot(page, "source-dialog-access-denied", full_page=False)


def test_a_hostile_excerpt_and_answer_render_as_literal_text(
    signed_in, app, knowledge, xss_knowledge, alice
):
    """Markup in a source excerpt or in model output is text: visible literally, never run."""
    agent(
        app,
        [knowledge, xss_knowledge],
        (
            {"search": "恶意片段", "topK": 1},
            {"answerPart": "模型输出 <img src=x onerror=window.__pwned=3> [[cite:{{c1}}]]"},
        ),
    )
    page = signed_in
    ask(page, alice.raw_token, "恶意片段？")
    wait_until_finished(page)
    expect(page.locator("#blocks .answer-text")).to_contain_text(
        "<img src=x onerror=window.__pwned=3>"
    )
    page.locator("#verified-sources [data-action=preview]").click()
    excerpt = page.locator("#source-dialog [data-role=excerpt]")
    expect(excerpt).to_have_text(XSS_PAGE)
    expect(page.locator("#source-dialog [data-role=title]")).to_have_text("<b>标题</b> 片段")
    assert excerpt.evaluate("node => node.children.length") == 0
    assert page.locator("#blocks img, #source-dialog img, #source-dialog script").count() == 0
    page.wait_for_timeout(300)
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_another_published_version_can_be_tried_for_the_tokens_owner(
    signed_in, app, knowledge, alice
):
    """The pin stays on 1; the run is alice's, of version 2, and streams with her token."""
    agent(app, knowledge, STREAMING_STEPS)
    agent(app, knowledge, ({"answerPart": "这是第二版的回答。"},), version="2", pin=False)
    page = signed_in
    ask(page, alice.raw_token, version="2")
    wait_until_finished(page)
    expect(page.locator("#blocks")).to_contain_text("这是第二版的回答。")
    run = Run.objects.select_related("agent_version").get()
    assert (run.owner, run.agent_version.version, run.status) == (alice, "2", "COMPLETED")
    assert app.agent_pins.get().version.version == "1"


def test_trying_another_version_needs_the_token_of_an_app_member(signed_in, app, knowledge):
    """A tried version's run is created for the owner of the token the server verified; a
    token it cannot verify, or of someone outside the app, creates nothing."""
    agent(app, knowledge, STREAMING_STEPS)
    agent(app, knowledge, ({"answerPart": "第二版"},), version="2", pin=False)
    stranger = factories.make_user(app.tenant, "carol")  # same tenant, not in the app
    page = signed_in
    for token, code in (
        ("st_not_a_real_token", "INVALID_REQUEST"),
        (stranger.raw_token, "RESOURCE_NOT_FOUND"),
    ):
        ask(page, token, "问题", version="2")
        expect(page.locator("#run-error")).to_be_visible()
        expect(page.locator("#run-error")).to_contain_text(code)
    assert Run.objects.count() == 0


def test_a_second_run_starts_from_a_clean_page(signed_in, app, knowledge, alice):
    """Blocks, sources and timeline of the first run never linger into the second."""
    agent(app, knowledge, MEMO_STEPS)
    page = signed_in
    ask(page, alice.raw_token, "第一次")
    wait_until_finished(page)
    first_source = page.locator("#verified-sources li[data-citation-id]").get_attribute(
        "data-citation-id"
    )
    page.fill("#question", "第二次")
    page.click("#start")
    expect(page.locator("#run-status")).to_have_class(
        re.compile("status-completed"), timeout=20_000
    )
    runs = list(Run.objects.order_by("created_at"))
    assert [r.input for r in runs] == ["第一次", "第二次"]
    expect(page.locator("#run-id")).to_have_text(runs[1].pk)
    expect(page.locator("#blocks [data-publication-id]")).to_have_count(1)
    expect(page.locator("#timeline [data-type='run.started']")).to_have_count(1)
    second_source = page.locator("#verified-sources li[data-citation-id]")
    expect(second_source).to_have_count(1)
    assert second_source.get_attribute("data-citation-id") != first_source
    page.locator("#verified-sources [data-action=preview]").click()
    expect(page.locator("#source-dialog [data-role=excerpt]")).to_contain_text("内部投研纪要")


# --- Markdown, chips and honest states ----------------------------------------------------------

MARKDOWN_ANSWER = "\n".join(
    [
        "## 概要",
        "",
        "**北辰医药**三季度营收同比增长 *12%* [[cite:{{c1}}]]。",
        "",
        "- 创新药销售是主要来源",
        "- 研发投入 `同比增加`",
        "",
        "| 指标 | 数值 |",
        "| --- | ---: |",
        "| 营收增速 | 12% [[cite:{{c1}}]] |",
        "",
        "[点我看详情](javascript:window.__pwned=4) 与 ![走势图](https://evil.example/x.png)",
        "",
        "**<img src=x onerror=window.__pwned=5>** <script>window.__pwned=6</script>",
        "",
        f"传闻 [[cite:{FORGED_ID}]]。",
    ]
)


def test_markdown_answers_render_as_elements_and_hostile_markdown_runs_nothing(
    signed_in, app, knowledge, alice
):
    """Headings, emphasis, lists, code and tables become elements; a javascript: link, an image
    and raw HTML inside Markdown are text: no <a>, no <img>, no script, the flag never set."""
    agent(app, knowledge, ({"search": "营收", "topK": 1}, {"answerPart": MARKDOWN_ANSWER}))
    page = signed_in
    ask(page, alice.raw_token)
    wait_until_finished(page)
    answer = page.locator("#blocks .answer-text")
    expect(answer.locator(".md-heading")).to_have_text("概要")
    expect(answer.locator("strong").first).to_have_text("北辰医药")
    expect(answer.locator("em")).to_have_text("12%")
    expect(answer.locator("ul.md-list > li")).to_have_count(2)
    expect(answer.locator("li code")).to_have_text("同比增加")
    expect(answer.locator("table.md-table th")).to_have_text(["指标", "数值"])
    expect(answer.locator("table.md-table td").nth(1).locator(".cite-chip")).to_have_attribute(
        "data-state", "verified"
    )
    expect(answer).to_contain_text("点我看详情 (javascript:window.__pwned=4)")
    expect(answer).to_contain_text("走势图")
    expect(answer).to_contain_text("(https://evil.example/x.png)")
    expect(answer).to_contain_text("<img src=x onerror=window.__pwned=5>")
    expect(answer).to_contain_text("<script>window.__pwned=6</script>")
    expect(answer).not_to_contain_text("**")
    expect(answer).not_to_contain_text("[[cite:")
    assert page.locator("#blocks a, #blocks img, #blocks script, #blocks iframe").count() == 0
    assert page.locator("[href^='javascript:' i], [src^='javascript:' i]").count() == 0
    # A link is never a source entry: only the one verified citation is.
    expect(page.locator("#verified-sources li[data-citation-id]")).to_have_count(1)
    page.wait_for_timeout(300)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    page.wait_for_timeout(1500)  # let the highlight animation fade for the screenshot
    screenshot(page, "debug-markdown")


def test_citation_chips_are_pending_until_the_final_check_then_verified_or_unverified(
    signed_in, app, knowledge, alice
):
    """While the run goes on no chip and no badge claims 来源已核验; citation.verified turns the
    chips into a numbered button and a 来源未核验 span, and the badge agrees with the sources."""
    agent(
        app,
        knowledge,
        (
            {"search": "营收", "topK": 1},
            {"answerPart": f"营收增长 12% [[cite:{{{{c1}}}}]]，另有传闻 [[cite:{FORGED_ID}]]。"},
            {"sleep": 2.5},
        ),
    )
    page = signed_in
    ask(page, alice.raw_token)
    block = page.locator("#blocks [data-publication-id]").first
    expect(block.locator(".cite-chip")).to_have_count(2)
    # Before the check: both pending, nothing clickable, the badge and the sources panel wait.
    expect(page.locator("#run-status")).to_have_class(re.compile("status-running"))
    expect(block.locator(".cite-chip[data-state=pending]")).to_have_count(2)
    expect(block.locator(".cite-chip")).to_have_text(["待核验", "待核验"])
    expect(block.locator("button.cite-chip")).to_have_count(0)
    expect(block.locator("[data-role=hint]")).to_have_attribute("data-status", "pending")
    expect(block.locator("[data-role=hint]")).to_have_text("来源待核验")
    expect(page.locator("#sources-pending")).to_be_visible()
    assert page.locator("#blocks").inner_text().count("来源已核验") == 0
    screenshot(page, "debug-chips-pending", full_page=False)

    wait_until_finished(page)
    verified = block.locator(".cite-chip[data-state=verified]")
    expect(verified).to_have_text("1")
    assert verified.evaluate("node => node.tagName") == "BUTTON"
    unverified = block.locator(f".cite-chip[data-citation-id='{FORGED_ID}']")
    expect(unverified).to_have_attribute("data-state", "unverified")
    expect(unverified).to_have_text("来源未核验")
    expect(block.locator("[data-role=hint]")).to_have_attribute("data-status", "sources_partial")
    expect(page.locator("#verification")).to_contain_text("已核验 1 个，未核验 1 个")
    verified.click()
    expect(page.locator("#source-dialog [data-role=excerpt]")).to_contain_text("北辰医药")


def test_a_start_refused_for_a_bad_token_shows_the_refusal_not_running(signed_in, app, knowledge):
    """createRun answers 401: the page says why, and the badge leaves 运行中 for 已拒绝."""
    agent(app, knowledge, STREAMING_STEPS)
    page = signed_in
    ask(page, "st_this_token_does_not_exist_0000000000")
    expect(page.locator("#run-status")).to_have_class(re.compile("status-refused"))
    expect(page.locator("#run-status")).to_have_text("已拒绝")
    expect(page.locator("#run-error")).to_contain_text("无法创建运行")
    expect(page.locator("#run-error")).to_contain_text("AUTHENTICATION_REQUIRED")
    expect(page.locator("#start")).to_be_enabled()
    expect(page.locator("#cancel")).to_be_hidden()
    page.wait_for_timeout(500)  # a late render must not put 运行中 back
    expect(page.locator("#run-status")).to_have_text("已拒绝")
    assert Run.objects.count() == 0


def test_a_cancelled_run_shows_its_markers_as_unverified_chips(signed_in, app, knowledge, alice):
    """No citation.verified ever comes for a cancelled run: its chips go from pending to
    来源未核验 and no raw [[cite:…]] is left on the page."""
    agent(
        app,
        knowledge,
        (
            {"search": "营收", "topK": 1},
            {"answerPart": "营收增长 [[cite:{{c1}}]]。"},
            {"sleep": 3},
            {"answerPart": "第二段。"},
            # The engine reads the cancel flag between turns: one more turn after the sleep.
            {"answerPart": "第三段。"},
        ),
    )
    page = signed_in
    ask(page, alice.raw_token)
    chip = page.locator("#blocks .cite-chip")
    expect(chip).to_have_attribute("data-state", "pending")
    page.click("#cancel")
    expect(page.locator("#run-status")).to_have_class(
        re.compile("status-cancelled"), timeout=20_000
    )
    expect(chip).to_have_attribute("data-state", "unverified")
    expect(chip).to_have_text("来源未核验")
    expect(page.locator("#blocks")).not_to_contain_text("[[cite:")
    expect(page.locator("#blocks [data-role=hint]").first).to_have_attribute(
        "data-status", "sources_unverified"
    )
    expect(page.locator("#sources-pending")).to_contain_text("没有最终核验")
    assert Run.objects.get().status == "CANCELLED"


def test_the_source_dialog_shows_the_page_and_clears_on_a_failed_reload_and_on_leaving(
    signed_in, app, knowledge, alice
):
    """Page up front, UTF-16 offsets only in the details line; 重新读取 after a revocation
    leaves no excerpt; pagehide with the dialog open closes and empties it."""
    agent(app, knowledge, MEMO_STEPS)
    page = signed_in
    ask(page, alice.raw_token, "内部纪要怎么说？")
    wait_until_finished(page)
    page.locator("#blocks .cite-chip[data-state=verified]").click()
    dialog = page.locator("#source-dialog")
    excerpt = dialog.locator("[data-role=excerpt]")
    expect(excerpt).to_have_text("内部投研纪要：北辰医药营收预测上调，仅限分析师阅读。")
    # The server gives the page and the paragraph where the cited text begins.
    expect(dialog.locator("[data-role=location]")).to_have_text("第 1 页 · 第 1 段")
    expect(dialog.locator("[data-role=details]")).to_contain_text("UTF-16 位置 0–")
    expect(dialog.locator("[data-role=meta]")).not_to_contain_text("位置")
    screenshot(page, "source-dialog-location", full_page=False)

    remove_perm("knowledge.read_document", alice, knowledge.private_doc)
    dialog.locator("[data-action=reload]").click()
    expect(dialog.locator("[data-role=error]")).to_have_attribute(
        "data-code", "KNOWLEDGE_ACCESS_DENIED"
    )
    expect(excerpt).to_have_text("")
    expect(dialog.locator("[data-role=excerpt-box]")).to_be_hidden()
    expect(dialog.locator("[data-role=location]")).to_have_text("")

    # Back to a readable source, then the page is left with the dialog open.
    assign_perm("knowledge.read_document", alice, knowledge.private_doc)
    dialog.locator("[data-action=reload]").click()
    expect(excerpt).to_contain_text("内部投研纪要")
    page.evaluate("window.dispatchEvent(new PageTransitionEvent('pagehide', {persisted: true}))")
    expect(dialog).to_be_hidden()
    expect(excerpt).to_have_text("")
    expect(page.locator("#owner-token")).to_have_value("")


def test_the_timeline_shows_clock_times_in_the_display_time_zone(signed_in, app, knowledge, alice):
    """Each event carries its time in Asia/Shanghai (the console's default), and the zone is named."""
    agent(app, knowledge, MEMO_STEPS)
    page = signed_in
    ask(page, alice.raw_token, "内部纪要怎么说？")
    wait_until_finished(page)
    expect(page.locator("#time-zone")).to_have_text("时间按 Asia/Shanghai (GMT+8) 显示")
    first = page.locator("#timeline [data-type='run.started'] time")
    at = first.get_attribute("datetime")
    expected = datetime.fromisoformat(at).astimezone(ZoneInfo("Asia/Shanghai")).strftime("%H:%M:%S")
    expect(first).to_have_text(expected)
