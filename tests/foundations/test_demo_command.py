"""`make demo`, for real: scripts/demo on the embedded default (SQLite under a
temporary SPARKTIDE_VAR_DIR, no DATABASE_URL or REDIS_URL) migrates, applies the
demo manifest, starts the ASGI server with its in-process task worker, serves the
console login page, answers a question streamed live over WebSocket, and stops
when it is terminated. `make demo-reset` removes only the demo database; started
again, the demo keeps the same admin password (var/admin_password), which signs in,
and the next-step curls it prints work as printed."""

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.realtime.wsclient import Closed, WSClient

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 180  # a bound, not a timing: shared CI machines can be slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def test_the_demo_command_serves_the_console_answers_live_and_stops(tmp_path):
    port = free_port()
    var_dir = tmp_path / "var"
    unset = {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "DEBUG"}
    env = {k: v for k, v in os.environ.items() if k not in unset}
    # No polling worth the name: live events must come from in-process wake-ups.
    env.update(PORT=str(port), SPARKTIDE_VAR_DIR=str(var_dir), SPARKTIDE_WS_POLL_SECONDS="600")
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        demo = subprocess.Popen(
            [str(ROOT / "scripts" / "demo")],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so nothing can leak
        )
    try:
        response = None

        def login_page_answers() -> bool:
            nonlocal response
            assert demo.poll() is None, f"scripts/demo exited early:\n{log.read_text()}"
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/console/login/", timeout=2)
            except httpx.TransportError:
                return False
            return response.status_code == 200

        assert wait_until(login_page_answers, STARTUP_TIMEOUT), log.read_text()
        assert "管理控制台登录" in response.text
        assert 'name="username"' in response.text and 'name="password"' in response.text
        assert (var_dir / "sparktide.sqlite3").exists()

        # The server may answer a moment before the script prints its banner.
        assert wait_until(lambda: "SparkTide demo is running" in log.read_text(), 15)
        output = log.read_text()
        assert "Applied demo/manifest.yaml" in output
        assert re.search(r"username=admin password=\S+", output)
        assert f"http://127.0.0.1:{port}/console/" in output
        assert "st_demo_analyst_token_0001" in output
        assert "in-process task worker started" in output

        frames = asyncio.run(ask_and_follow(port))
        types = [f["type"] for f in frames]
        assert types[0] == "run.started" and types[-1] == "run.completed", types
        assert types.count("answer.published") == 3 and "citation.verified" in types
        verified = next(f for f in frames if f["type"] == "citation.verified")["data"]
        assert verified["references"] and {r["status"] for r in verified["references"]} == {
            "VERIFIED"
        }

        # The banner's evaluation command, run as printed, evaluates the desk and keeps it.
        command = next(line.strip() for line in output.splitlines() if "manage.py evaluate" in line)
        evaluated = subprocess.run(
            ["bash", "-c", command], env=env, capture_output=True, text=True, timeout=300
        )
        assert evaluated.returncode == 0, evaluated.stderr
        assert re.search(r"Kept as evaluation eval_\w+", evaluated.stdout), evaluated.stdout
        assert "researcher@1" in evaluated.stdout and "desk/bond-unit-nav" in evaluated.stderr
        assert evaluated.stderr.count("] researcher@1 ") == 6  # one progress line a question

        # Terminate the script: its trap must take the server down with it.
        os.kill(demo.pid, signal.SIGTERM)
        demo.wait(timeout=30)
        assert wait_until(lambda: not group_alive(demo.pid), 15), "a demo process outlived it"
    finally:
        if group_alive(demo.pid):
            os.killpg(demo.pid, signal.SIGKILL)
        demo.wait(timeout=10)

    password = re.search(r"username=admin password=(\S+)", output).group(1)
    kept = var_dir / "admin_password"
    assert kept.read_text().strip() == password and kept.stat().st_mode & 0o777 == 0o600

    # make demo-reset: the demo database goes, the secret key and the password stay.
    reset = subprocess.run(
        ["make", "demo-reset", f"SPARKTIDE_VAR_DIR={var_dir}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert reset.returncode == 0, reset.stderr
    assert not (var_dir / "sparktide.sqlite3").exists()
    assert kept.exists() and (var_dir / "secret_key").exists()

    again = tmp_path / "demo-again.log"
    with again.open("wb") as out:
        demo = subprocess.Popen(
            [str(ROOT / "scripts" / "demo")],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        assert wait_until(
            lambda: "SparkTide demo is running" in again.read_text() or demo.poll() is not None,
            STARTUP_TIMEOUT,
        ), again.read_text()
        banner = again.read_text()
        assert "Applied demo/manifest.yaml: " in banner and "no changes" not in banner  # a fresh DB
        assert f"username=admin password={password}" in banner  # the same password
        assert admin_login(port, password)
        outputs = run_next_steps(banner)
        events = json.loads(outputs[0])
        assert events["events"][-1]["type"] == "run.completed"
        assert json.loads(outputs[1])["blocks"]
        preview = json.loads(outputs[2])
        assert preview["scope"] == "RETRIEVED_EXCERPT" and preview["content"]
    finally:
        os.killpg(demo.pid, signal.SIGTERM)
        demo.wait(timeout=30)
        if group_alive(demo.pid):
            os.killpg(demo.pid, signal.SIGKILL)


def admin_login(port: int, password: str) -> bool:
    """Sign in to the Django admin with the printed password, as a person would."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
        page = http.get("/admin/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        response = http.post(
            "/admin/login/?next=/admin/",
            data={"username": "admin", "password": password, "csrfmiddlewaretoken": token},
            headers={"Referer": f"http://127.0.0.1:{port}/admin/login/"},
        )
        return response.status_code == 302 and response.headers["location"] == "/admin/"


def run_next_steps(banner: str) -> list[str]:
    """Run the printed next-step commands in bash exactly as printed; the JSON lines out."""
    block = banner.split("Next steps", 1)[1].split("API reference:", 1)[0]
    script = "\n".join(line[4:] for line in block.splitlines()[1:] if line.startswith("    "))
    assert "curl" in script and "/preview" in script
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.startswith("{")]


async def ask_and_follow(port: int) -> list[dict]:
    """Ask the demo agent a question through the REST API and follow its events live."""
    token = "st_demo_analyst_token_0001"
    base = f"http://127.0.0.1:{port}/v1/apps/research-desk/runs"
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=10) as http:
        # The scripted briefing pauses 1.5 s mid-run, so the socket opens while it runs.
        created = await http.post(base, json={"agent": "briefing", "input": "晨会简报"})
        assert created.status_code == 201, created.text
        run_id = created.json()["id"]
        ticket = (await http.post(f"{base}/{run_id}/events/ticket")).json()["ticket"]
        assert (await http.get(f"{base}/{run_id}")).json()["status"] in {"QUEUED", "RUNNING"}
    path = f"/ws/v1/apps/research-desk/runs/{run_id}/events?after=0&ticket={quote(ticket)}"
    client = await WSClient.connect("127.0.0.1", port, path, origin=f"http://127.0.0.1:{port}")
    frames = []
    try:
        while True:
            frames.append(json.loads(await client.recv(timeout=30)))
    except Closed as closed:
        assert closed.code == 1000
    finally:
        client.abort()
    return frames
