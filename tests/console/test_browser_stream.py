"""运行调试 in real headless Chromium shows a model turn's text while it is generated.

The model is a real local chat-completions server (tests/providers/fake_openai.py) that streams
slowly and then pauses before its turn ends; daphne and a task worker serve the page. The text
is on the page before ``answer.published`` exists anywhere, markers in it are plain text, and
the published block then stands in its place.
"""

import re

import pytest
from playwright.sync_api import expect

from publication.models import AnswerBlock
from runs.models import Run, RunEvent
from tests import factories
from tests.console.conftest import FORGED_ID, screenshot
from tests.providers.fake_openai import FakeOpenAI, chunk, finish_chunk, stream, text_chunk

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.slow]

KEY_ENV = "SPARKTIDE_TEST_OPENAI_KEY"
SAID = ["北辰医药", "三季度营收", "增长 12%", f" [[cite:{FORGED_ID}]]", "，", "<b>未核验</b>"]
UNCLOSED = " [[cite:cite_bbbb"  # still being written when the model pauses
PAUSE_TICKS = 12  # empty chunks: the model pauses this many intervals before its turn ends


@pytest.fixture
def model_key(monkeypatch):
    """Set before the worker starts (it inherits this process's environment)."""
    monkeypatch.setenv(KEY_ENV, "sk-test")


def slow_then_pause() -> list:
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [text_chunk(w) for w in SAID]
    chunks += [text_chunk(UNCLOSED)]
    chunks += [chunk({}) for _ in range(PAUSE_TICKS)]
    chunks += [text_chunk("aaaaaaaaaaaaaaaaaaaa]]。"), finish_chunk("stop")]
    return [stream(chunks, delay_between=0.25)]


def test_streamed_text_is_visible_before_the_answer_is_published(
    model_key, signed_in, app, knowledge, alice
):
    """While the model pauses mid-turn, 运行调试 shows what it said so far as plain text — the
    marker is text, not a button, the unclosed marker is held back — and nothing has been
    published; then the block replaces the live text."""
    with FakeOpenAI(slow_then_pause()) as server:
        factories.make_agent(
            app.tenant,
            "researcher",
            model={
                "provider": "openai",
                "baseUrl": server.base_url,
                "model": "m",
                "apiKeyEnv": KEY_ENV,
            },
            knowledge=[knowledge],
            pin_to=[app],
        )
        page = signed_in
        page.goto("/console/apps/business/debug/")
        page.fill("#owner-token", alice.raw_token)
        page.fill("#question", "北辰医药三季度营收如何？")
        page.click("#start")

        live = page.locator("#blocks [data-stream]")
        expect(live).to_have_text("".join(SAID), timeout=20_000)
        # The model is pausing: nothing has been published, on the page or in the log.
        run = Run.objects.get()
        assert run.status == Run.Status.RUNNING
        assert not RunEvent.objects.filter(run=run, type="answer.published").exists()
        assert not AnswerBlock.objects.filter(run=run).exists()
        expect(page.locator("#timeline [data-type='answer.published']")).to_have_count(0)
        expect(page.locator("#blocks [data-publication-id]")).to_have_count(0)
        # Markers in the live text are text: no button, no chip, no element of the model's.
        expect(live.locator("*")).to_have_count(0)
        expect(page.locator(f"[data-citation-id='{FORGED_ID}']")).to_have_count(0)
        expect(page.locator("#blocks b")).to_have_count(0)
        screenshot(page, "debug-live-text")

        expect(page.locator("#run-status")).to_have_class(
            re.compile("status-(completed|partial)"), timeout=20_000
        )
    expect(live).to_have_count(0)
    block = page.locator("#blocks [data-publication-id]")
    expect(block).to_have_count(1)
    expect(block).to_contain_text("北辰医药三季度营收增长 12%")
    expect(page.locator("#timeline [data-type='answer.stream']")).to_have_count(1)
    assert not page.problems, page.problems
