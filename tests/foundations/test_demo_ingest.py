"""From a new PDF to a cited answer in the demo with the one command docs/ingest.md gives,
for real: scripts/demo on the embedded default (SQLite), `manage.py ingest … --publish --app
research-desk --agent researcher` from another process against the demo's database, a
question through the REST API whose answer cites the PDF's page, and a restart of the demo
that keeps the new pin (the manifest is applied at the first start only)."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests import factories
from tests.foundations.test_demo_command import STARTUP_TIMEOUT, free_port, group_alive, wait_until

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "st_demo_analyst_token_0001"
TITLE = "远航物流股份有限公司 2026 年第四季度报告"
PAGES = [TITLE, "第二页：报告期末公司冷库周转天数为 12.5 天，较上年同期缩短 1.8 天。"]
CHROMIUM = os.environ.get("SPARKTIDE_CHROMIUM", "/usr/bin/chromium")
QUESTION = "远航物流的冷库周转天数是多少？"


def chinese_pdf(tmp_path: Path) -> Path:
    """A two-page Chinese PDF with a real text layer, as office software prints one: Chromium
    prints an HTML page to PDF with an embedded CJK font (fonts-noto-cjk)."""
    factories.require(Path(CHROMIUM).exists(), "Chromium prints the Chinese PDF")
    html = tmp_path / "report.html"
    body = "".join(f'<p style="page-break-after: always">{page}</p>' for page in PAGES)
    html.write_text(
        f'<html><head><meta charset="utf-8"><title>{TITLE}</title></head><body>{body}</body></html>',
        encoding="utf-8",
    )
    pdf = tmp_path / "yuanhang-logistics-2026q4.pdf"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            f"--print-to-pdf={pdf}",
            str(html),
        ],
        capture_output=True,
        timeout=60,
        check=True,
    )
    return pdf


def _start(env: dict, log: Path) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(ROOT / "scripts" / "demo")],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _stop(demo: subprocess.Popen) -> None:
    if group_alive(demo.pid):
        os.killpg(demo.pid, signal.SIGTERM)
    demo.wait(timeout=30)
    if group_alive(demo.pid):
        os.killpg(demo.pid, signal.SIGKILL)


def _ask(port: int) -> dict:
    """A question as a business app asks it; the first block's first citation, previewed."""
    base = f"http://127.0.0.1:{port}/v1/apps/research-desk/runs"
    with httpx.Client(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10) as http:
        created = http.post(base, json={"agent": "researcher", "input": QUESTION})
        assert created.status_code == 201, created.text
        run_id = created.json()["id"]
        deadline = time.monotonic() + 60
        while http.get(f"{base}/{run_id}").json()["status"] in ("QUEUED", "RUNNING"):
            assert time.monotonic() < deadline, "the run did not end"
            time.sleep(0.2)
        assert http.get(f"{base}/{run_id}").json()["status"] == "COMPLETED"
        blocks = http.get(f"{base}/{run_id}/answer").json()["blocks"]
        text = blocks[0]["content"]["text"]
        cite = re.search(r"\[\[cite:(cite_[a-z0-9]+)\]\]", text)
        assert cite, text
        preview = http.get(f"{base}/{run_id}/citations/{cite.group(1)}/preview")
        assert preview.status_code == 200, preview.text
        return {"text": text, **preview.json()}


def test_a_new_pdf_reaches_a_cited_answer_in_the_demo_with_one_command(tmp_path):
    port = free_port()
    var_dir = tmp_path / "var"
    unset = {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "DEBUG"}
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(PORT=str(port), SPARKTIDE_VAR_DIR=str(var_dir))
    pdf = chinese_pdf(tmp_path)

    demo = _start(env, tmp_path / "demo.log")
    try:
        assert wait_until(
            lambda: (
                "SparkTide demo is running" in (tmp_path / "demo.log").read_text()
                or demo.poll() is not None
            ),
            STARTUP_TIMEOUT,
        ), (tmp_path / "demo.log").read_text()

        # The one command of docs/ingest.md, run as an operator runs it beside the demo.
        ingested = subprocess.run(
            [
                str(ROOT / ".venv" / "bin" / "python"),
                "manage.py",
                "ingest",
                "demo/fund-reports@2026-Q4",
                str(pdf),
                "--publish",
                "--app",
                "research-desk",
                "--agent",
                "researcher",
            ],
            cwd=ROOT,
            env={**env, "DEBUG": "1"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ingested.returncode == 0, ingested.stderr
        assert "research-desk now pins it" in ingested.stdout

        answer = _ask(port)
        assert "12.5" in answer["text"]
        assert answer["knowledgeVersion"] == "2026-Q4"
        assert answer["sourceRef"]["page"] == 2 and "12.5 天" in answer["content"]
    finally:
        _stop(demo)

    # A restart keeps what was changed since the first start: the pin is not reverted.
    demo = _start(env, tmp_path / "again.log")
    try:
        assert wait_until(
            lambda: (
                "SparkTide demo is running" in (tmp_path / "again.log").read_text()
                or demo.poll() is not None
            ),
            STARTUP_TIMEOUT,
        ), (tmp_path / "again.log").read_text()
        assert "not applied again" in (tmp_path / "again.log").read_text()
        assert _ask(port)["knowledgeVersion"] == "2026-Q4"
    finally:
        _stop(demo)
