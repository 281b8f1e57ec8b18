"""`make demo`, for real: scripts/demo on the embedded default (SQLite under a
temporary SPARKTIDE_VAR_DIR, no DATABASE_URL or REDIS_URL) migrates, applies the
demo manifest, starts the task worker and the ASGI server, serves the console
login page, and stops both processes when it is terminated."""

import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 90


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


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


def test_the_demo_command_serves_the_console_and_stops_its_worker(tmp_path):
    port = free_port()
    var_dir = tmp_path / "var"
    unset = {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "DEBUG"}
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(PORT=str(port), SPARKTIDE_VAR_DIR=str(var_dir))
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
        worker_pid = int(re.search(r"task worker started \(pid (\d+)\)", output).group(1))
        assert alive(worker_pid)

        # Terminate the script: its trap must take the server and the worker down.
        os.kill(demo.pid, signal.SIGTERM)
        demo.wait(timeout=30)
        assert wait_until(lambda: not alive(worker_pid), 15), "the task worker outlived the demo"
        assert wait_until(lambda: not group_alive(demo.pid), 15), "a demo process outlived it"
    finally:
        if group_alive(demo.pid):
            os.killpg(demo.pid, signal.SIGKILL)
        demo.wait(timeout=10)
