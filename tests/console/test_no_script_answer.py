"""运行详情 without JavaScript: the server's own rendering of an answer shows no marker as written.

Citation markers are text chips carrying their state (``[1]`` 来源已核验, ``[待核验]``,
``[来源未核验]``), numeric and block markers are labelled chips, and the body's Markdown is
escaped text. Read from the server's response and its template, no browser."""

import re

import pytest
from django.template.loader import render_to_string

from console.detail import answer_segments
from runs.models import Run, RunEvent
from tests import factories
from tests.console.conftest import FORGED_ID
from tests.console.test_pages import html

MARKDOWN_STEPS = (
    {"search": "营收", "topK": 2},
    {
        "answerPart": "**概要**\n\n- 北辰医药三季度营收增长 12% [[cite:{{c1}}]]\n"
        f"- <img src=x onerror=alert(1)> 传闻 [[cite:{FORGED_ID}]]\n"
        "| 指标 | 值 |\n| --- | --- |\n| 研发 | 增加 [[cite:{{c2}}]] |",
    },
)
RAW_MARKER = re.compile(r"\[\[(?:cite|num|block):|\[cite_")


@pytest.fixture
def markdown_run(app, knowledge, make_run):
    factories.make_agent(
        app.tenant,
        "writer",
        model=factories.scripted(*MARKDOWN_STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )
    return make_run(agent_key="writer")


@pytest.fixture
def run_with_steps(researcher, make_run):
    return make_run()


def _answer_text(page: str) -> str:
    """The server-rendered answer bodies, without the JSON the page script re-renders from."""
    answer = page.split('id="answer"')[1].split('class="detail-side"')[0]
    return re.sub(r"<script[^>]*>.*?</script>", "", answer, flags=re.S)


def test_the_answer_without_scripts_shows_chips_and_no_marker(staff_client, markdown_run):
    page = html(staff_client.get(f"/console/runs/{markdown_run.pk}/"))
    answer = _answer_text(page)
    assert "北辰医药三季度营收增长 12%" in answer
    assert not RAW_MARKER.search(answer), RAW_MARKER.search(answer)
    # two VERIFIED sources: numbered text chips linking to their entry in 回答来源区
    chips = re.findall(
        r'<a class="cite-chip is-verified" href="#source-(\d)"[^>]*>\[(\d)\]', answer
    )
    assert chips == [("1", "1"), ("2", "2")]
    assert answer.count('<span class="cite-state">来源已核验</span>') == 2
    assert 'id="source-1"' in page and 'id="source-2"' in page
    # the forged ID: the final check listed it UNVERIFIED
    forged = re.findall(rf'data-citation-id="{FORGED_ID}"[^>]*>([^<]*)<', answer)
    assert forged == ["[来源未核验]"]
    # Markdown and raw HTML are text, escaped
    assert "**概要**" in answer and "- 北辰医药" in answer and "| --- |" in answer
    assert "<img" not in answer and "&lt;img src=x onerror=alert(1)&gt;" in answer


def test_markers_before_the_final_check_are_pending_and_others_are_labelled() -> None:
    text = "营收 [[cite:cite_bbbbbbbbbbbbbbbbbbbbbbbb]] 净利 [[num:n_1]] 见 [[block:pub_x]] 旧 [cite_ccc]"
    running = render_to_string(
        "console/_content.html",
        {
            "content": {"type": "text", "text": text},
            "segments": answer_segments(text, {}, settled=False),
        },
    )
    body = running.split("<script")[0]
    assert not RAW_MARKER.search(body)
    assert body.count("[待核验]</span>") == 2 and "来源未核验" not in body
    assert "[未解析的数值标记]" in body and "[引用其他区块的标记]" in body
    ended = render_to_string(
        "console/_content.html",
        {
            "content": {"type": "text", "text": text},
            "segments": answer_segments(text, {}, settled=True),
        },
    )
    assert ended.split("<script")[0].count("[来源未核验]</span>") == 2


# --- the event log's summaries --------------------------------------------------------


def _event_rows(page: str) -> list[tuple[str, str]]:
    """(type, summary cell) of each event-log row, in seq order."""
    table = page.split('id="events"')[1].split("</table>")[0]
    rows = re.findall(
        r'<span class="pill pill-\w+">([\w.]+)</span>.*?<td class="summary">(.*?)</td>', table, re.S
    )
    assert rows, "no event rows found"
    return rows


def test_the_event_log_locates_citations_by_page_and_paragraph(staff_client, run_with_steps):
    page = html(staff_client.get(f"/console/runs/{run_with_steps.pk}/"))
    created = [summary for kind, summary in _event_rows(page) if kind == "citation.created"]
    assert len(created) == 2
    for summary in created:
        line, details = summary.split('<div class="muted small event-details">')
        assert re.search(r"第 [12] 页 · 第 \d+ 段", line), line
        assert "位置" not in line
        assert re.search(r"UTF-16 位置 \d+–\d+ · 片段 \d+", details)


def test_no_verified_claim_in_the_log_before_the_final_check(staff_client, run_with_steps):
    rows = _event_rows(html(staff_client.get(f"/console/runs/{run_with_steps.pk}/")))
    kinds = [kind for kind, _ in rows]
    check = kinds.index("citation.verified")
    before = [
        summary for kind, summary in rows[:check] if kind in ("answer.published", "answer.preview")
    ]
    assert len(before) >= 3
    for summary in before:
        assert "已核验" not in summary, summary
    assert any(summary.endswith("来源待核验") for summary in before)


def test_the_block_badge_without_scripts_follows_the_final_check(staff_client, markdown_run):
    """Two cited IDs VERIFIED and a forged one UNVERIFIED: the block's badge may not say more
    than the check (block_badge, the SDK's blockSourceStatus), whatever its receipt claimed."""
    page = html(staff_client.get(f"/console/runs/{markdown_run.pk}/"))
    article = page.split('<article class="block')[1].split("</header>")[0]
    badges = re.findall(
        r'<span class="badge hint-([\w]+)" data-role="hint">([^<]*)</span>', article
    )
    assert badges == [("sources_partial", "部分来源已核验")]


def test_the_block_badge_without_scripts_is_pending_before_the_final_check(
    staff_client, markdown_run
):
    """The same run seen as it was before its final check (the check's event not yet written,
    the run still running): no block may claim verified sources yet."""
    RunEvent.objects.filter(run=markdown_run, type="citation.verified").delete()
    Run.objects.filter(pk=markdown_run.pk).update(status=Run.Status.RUNNING)
    page = html(staff_client.get(f"/console/runs/{markdown_run.pk}/"))
    article = page.split('<article class="block')[1].split("</header>")[0]
    badges = re.findall(
        r'<span class="badge hint-([\w]+)" data-role="hint">([^<]*)</span>', article
    )
    assert badges == [("pending", "来源待核验")]
