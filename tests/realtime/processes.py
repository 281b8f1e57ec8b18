"""Real processes for the cross-process test and bench/delivery.py: a daphne
server and a worker that executes one run, both on the same database and Redis."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(Path(sys.executable))
DAPHNE = str(Path(sys.executable).with_name("daphne"))


def database_url(settings_dict: dict) -> str:
    if settings_dict["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{settings_dict['NAME']}"  # the test database's file (settings.py)
    user = settings_dict.get("USER") or "postgres"
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{password}" if password else user
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}@{host}:{port}/{settings_dict['NAME']}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_env(**extra: str) -> dict:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "DJANGO_", "SPARKTIDE_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="tests.settings",
        PYTHONPATH=str(ROOT),
        SECRET_KEY="sparktide-test-secret-key-not-for-production-use",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        LOG_LEVEL="WARNING",
    )
    env.update(extra)
    return env


class Process:
    """A child in its own process group, always terminated with the whole group."""

    def __init__(self, args: list[str], env: dict) -> None:
        # Open as long as the child lives; closed and removed in stop().
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix="sparktide-", suffix=".log", delete=False
        )
        self.popen = subprocess.Popen(
            args,
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self, limit: int = 4000) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-limit:]

    def wait(self, timeout: float) -> int:
        return self.popen.wait(timeout)

    def stop(self, timeout: float = 10.0) -> None:
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout)
            except ProcessLookupError:
                pass
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)


def start_daphne(
    port: int, env: dict, *, timeout: float = 30.0, command: list[str] | None = None
) -> Process:
    """``command``: what runs daphne's command line (bench/delivery.py --profile), else daphne."""
    server = Process(
        [*(command or [DAPHNE]), "-b", "127.0.0.1", "-p", str(port), "sparktide.asgi:application"],
        env,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.popen.poll() is not None:
            output = server.output()
            server.stop()
            raise RuntimeError(f"daphne exited early:\n{output}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.1)
    output = server.output()
    server.stop()
    raise RuntimeError(f"daphne did not listen on {port} within {timeout}s:\n{output}")


def start_worker(run_id: str, env: dict) -> Process:
    """Execute one run in another process, as a task worker would."""
    code = (
        "import django, sys; django.setup(); "
        "from runtime.engine import execute_run; print(execute_run(sys.argv[1]))"
    )
    return Process([PYTHON, "-c", code, run_id], env)
