"""Every Python example of docs/sdk.md and clients/python/README.md runs, as printed, against a
live daphne with the demo manifest applied (app research-desk, agent researcher, the analyst's
token). The only changes made to a block before it runs are the two placeholders a reader
replaces too: the server's URL and the token. Each block runs in its own interpreter with this
checkout's client, and what it prints is checked against the demo's published report."""

import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from runs.models import Run
from tests.clients.checkout import CLIENT_SRC
from tests.clients.conftest import start_live_server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
DEMO_MANIFEST = ROOT / "demo" / "manifest.yaml"
DEMO_TOKEN = "st_demo_analyst_token_0001"  # fixed in demo/manifest.yaml
PLACEHOLDER_URL = "https://sparktide.example.com"
PLACEHOLDER_TOKEN = '"st_…"'
DOCS = (ROOT / "docs" / "sdk.md", ROOT / "clients" / "python" / "README.md")


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), re.M | re.S)


EXAMPLES = [
    pytest.param(path, index, block, id=f"{path.relative_to(ROOT)}#{index + 1}")
    for path in DOCS
    for index, block in enumerate(python_blocks(path))
]


def test_the_docs_have_the_python_examples_this_test_runs():
    counts = {path.name: len(python_blocks(path)) for path in DOCS}
    assert counts == {"sdk.md": 2, "README.md": 1}, counts
    for _, _, block in (param.values for param in EXAMPLES):
        assert PLACEHOLDER_URL in block and PLACEHOLDER_TOKEN in block, block


@pytest.fixture
def demo_server():
    call_command("apply_manifest", str(DEMO_MANIFEST), stdout=StringIO())
    server = start_live_server()
    yield server
    server.process.stop(timeout=3)


@pytest.mark.parametrize(("path", "index", "block"), EXAMPLES)
def test_each_python_example_runs_as_printed_against_the_demo(
    path, index, block, demo_server, tmp_path
):
    script = tmp_path / "example.py"
    script.write_text(
        block.replace(PLACEHOLDER_URL, demo_server.url).replace(
            PLACEHOLDER_TOKEN, f'"{DEMO_TOKEN}"'
        ),
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(CLIENT_SRC), "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == "", result.stderr
    out = result.stdout

    run = Run.objects.get()  # the example's own run, on the demo's agent, finished
    assert (run.agent_version.agent.key, run.status) == ("researcher", Run.Status.COMPLETED)
    cited = re.findall(r"cite_[a-z0-9]{24}", out)
    # Every example shows the demo's report, through a preview or resolved citations.
    assert "北辰医药" in out, out
    assert "[[cite:" not in out, out  # verified markers were resolved, never printed raw
    if "preview_citation" in block:
        assert "48.6 亿元" in out or "营业收入" in out, out  # the excerpt's text
    if "verified()" in block and "preview_citation" not in block:
        assert cited, out
    if "segments(" in block:
        assert "[北辰医药股份有限公司 2026 年第三季度报告]" in out, out
