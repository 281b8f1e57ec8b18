"""运行调试 in real headless Chromium, against daphne and a task worker."""

import re

import pytest
from guardian.shortcuts import remove_perm
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
    {"sleep": 0.6},
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
    first = page.locator("#blocks [data-publication-id][data-revision='1']").first
    expect(first).to_be_visible()
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
    """The forged marker stays literal text in the answer and sits under 来源未核验, unclickable."""
    agent(app, knowledge, STREAMING_STEPS)
    page = signed_in
    ask(page, alice.raw_token)
    wait_until_finished(page)
    unverified = page.locator(f"#unverified-sources [data-citation-id='{FORGED_ID}']")
    expect(unverified).to_be_visible()
    expect(page.locator("#unverified-box")).to_contain_text("来源未核验")
    expect(unverified.locator("button, a")).to_have_count(0)
    expect(page.locator(f"[data-action=preview][data-citation-id='{FORGED_ID}']")).to_have_count(0)
    expect(page.locator("#blocks .marker")).to_contain_text(f"[[cite:{FORGED_ID}]]")
    # The verified one is a chip and a listed source, both with a way to the excerpt.
    expect(page.locator("#verified-sources [data-action=preview]")).to_have_count(1)
    expect(page.locator("#blocks .cite-chip")).to_have_count(1)


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
    page.locator("#blocks .cite-chip").click()
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
