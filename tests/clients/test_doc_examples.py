"""Every Python example of docs/sdk.md and clients/python/README.md runs, as printed, against a
live daphne with the demo manifest applied (app research-desk, agent researcher, the analyst's
token). The only changes made to a block before it runs are the two placeholders a reader
replaces too: the server's URL and the token. Each block runs in its own interpreter with this
checkout's client, and what it prints is checked against the demo's published report.

The Java examples of docs/sdk.md run the same way in jshell, on the compiled Java client, after a
prelude that defines what their prose says the reader has (token, runId, citationId, handle).
(The HTML page is checked verbatim and run in Chromium by test_frontend_sdk.py.)"""

import os
import re
import shutil
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from runs.models import Run
from tests.clients.checkout import CLIENT_SRC
from tests.clients.conftest import start_live_server, verified_citations, wait_for_terminal
from tests.clients.test_java_client import java_build  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
DEMO_MANIFEST = ROOT / "demo" / "manifest.yaml"
DEMO_TOKEN = "st_demo_analyst_token_0001"  # fixed in demo/manifest.yaml
PLACEHOLDER_URL = "https://sparktide.example.com"
PLACEHOLDER_TOKEN = '"st_…"'
DOCS = (ROOT / "docs" / "sdk.md", ROOT / "clients" / "python" / "README.md")


def blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", path.read_text(encoding="utf-8"), re.M | re.S)


def python_blocks(path: Path) -> list[str]:
    return blocks(path, "python")


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


JAVA_PRELUDE = """
import java.util.List;
import java.util.Map;
String token = "{token}";
String runId = "{run_id}";
String citationId = "{citation_id}";
void handle(Map<?, ?> event) {{ System.out.println("event " + event.get("seq") + " " + event.get("type")); }}
"""


def test_the_java_examples_run_in_jshell_against_the_demo(demo_server, java_build, tmp_path):  # noqa: F811
    jshell = shutil.which("jshell")
    assert jshell, "JDK 17 (scripts/ensure-java) has jshell"
    java = blocks(ROOT / "docs" / "sdk.md", "java")
    assert len(java) == 2, java
    from sparktide_client import Client

    with Client(demo_server.url, "research-desk", DEMO_TOKEN) as client:
        run_id = client.create_run("researcher", "北辰医药三季度营业收入是多少？")["id"]
    wait_for_terminal(run_id)
    citation_id = verified_citations(run_id)[0]

    script = JAVA_PRELUDE.format(token=DEMO_TOKEN, run_id=run_id, citation_id=citation_id)
    script += java[0].replace(PLACEHOLDER_URL, demo_server.url)
    script += "\nexcerpt.toCompletableFuture().handle((value, error) -> null).join();\n"
    script += java[1] + "\n/exit\n"
    (tmp_path / "examples.jsh").write_text(script, encoding="utf-8")
    utf8 = ["-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8", "-Dsun.stderr.encoding=UTF-8"]
    result = subprocess.run(
        [jshell, "--class-path", str(java_build), "--feedback", "silent"]
        + [f"-J{flag}" for flag in utf8]
        + [f"-R{flag}" for flag in utf8]
        + ["examples.jsh"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=180,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "Error" not in out and "Exception" not in out, out
    assert "营业收入 48.6 亿元" in out, out  # the excerpt's content, printed as text
    seqs = [int(seq) for seq in re.findall(r"^event (\d+) ", result.stdout, re.M)]
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) >= 4, out  # every event, in order
    assert re.search(r"^event \d+ run.completed$", result.stdout, re.M), out
