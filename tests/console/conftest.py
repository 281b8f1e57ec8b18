"""Console fixtures: a staff admin, the acme tenant's knowledge and agents, finished runs.

Three fixed users as elsewhere: alice (owner, reads the restricted memo), bob (a member
without the memo) and mallory of another tenant; ``root`` is the platform admin."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
from django.test import Client
from playwright.sync_api import expect

from runs.models import Run
from runtime.engine import execute_run
from runtime.services import start_run
from tests import factories

REPORT_PAGES = [
    "北辰医药2026年三季度营收增长12%，主要来自创新药销售。\n\n公司研发投入同比增加。",
    "第二页：毛利率保持稳定，现金流充裕。管理层预计四季度延续增长。",
]
# A forged but well-formed ID: never issued, so the final check lists it UNVERIFIED.
FORGED_ID = "cite_aaaaaaaaaaaaaaaaaaaaaaaa"

ANSWER_STEPS = (
    # One search per source, so c1 is the report and c2 the memo whatever the ranking does.
    {"search": "三季度 营收", "topK": 1},
    {"search": "投研纪要", "topK": 1},
    {"answerPart": "北辰医药三季度营收增长 [[cite:{{c1}}]]。"},
    {
        "answerPart": "北辰医药三季度营收同比增长 12%，主要来自创新药 [[cite:{{c1}}]]。"
        f"另有传闻 [[cite:{FORGED_ID}]]。",
        "replaces": "{{p1}}",
    },
    {"answerPart": "研发投入同比增加 [[cite:{{c2}}]]。"},
)


@pytest.fixture
def knowledge(tenant, app, alice):
    return factories.fund_reports(tenant, app, alice, pages=REPORT_PAGES)


@pytest.fixture
def researcher(app, knowledge):
    return factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*ANSWER_STEPS),
        knowledge=[knowledge],
        pin_to=[app],
    )


@pytest.fixture
def make_run(app, alice):
    """Start a run of the pinned agent and execute it in this process."""

    def run(*, owner=None, agent_key="researcher", input="北辰医药营收如何？", **kwargs) -> Run:
        created = start_run(
            user=owner or alice, app=app, agent_key=agent_key, input=input, **kwargs
        )
        execute_run(created.pk)
        return Run.objects.get(pk=created.pk)

    return run


@pytest.fixture
def staff_client(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


# --- real servers and a real browser ------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "console"
CHROMIUM = os.environ.get("SPARKTIDE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
STAFF_PASSWORD = "root-password-123"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _database_url(settings_dict: dict) -> str:
    user = quote(settings_dict.get("USER") or "")
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{quote(password)}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@pytest.fixture
def live_console(transactional_db):
    """daphne (HTTP + WebSocket) and a task worker on the pytest-django test database.

    Data the tests create with ``django_db(transaction=True)`` is committed, so both
    processes see it; the Redis channel layer (a per-test prefix) carries the worker's
    wake-ups to daphne. They are per test on purpose: the flush between transactional
    tests re-creates content types and permissions under new IDs, which long-lived
    processes would keep cached (guardian's checks would then deny everything). Both are
    stopped — process group and all — before the database is flushed.
    """
    from django.db import connection

    factories.require(
        connection.vendor == "postgresql", "browser tests need PostgreSQL shared with the servers"
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": _database_url(connection.settings_dict),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SPARKTIDE_CHANNEL_PREFIX": f"console-test-{uuid.uuid4().hex[:10]}",
        "SPARKTIDE_DB_POOL_SIZE": "8",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DEBUG", None)
    bin_dir = Path(sys.executable).parent
    processes = []
    logs = []
    try:
        for name, command in (
            (
                "daphne",
                [
                    str(bin_dir / "daphne"),
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "sparktide.asgi:application",
                ],
            ),
            ("worker", [sys.executable, "manage.py", "run_worker", "--interval", "0.1"]),
        ):
            log = open(ARTIFACTS / f"{name}.log", "w")  # noqa: SIM115 - closed at teardown
            logs.append(log)
            processes.append(
                subprocess.Popen(
                    command,
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        base_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            for process in processes:
                if process.poll() is not None:
                    pytest.fail(f"a console test server exited early; see {ARTIFACTS}/*.log")
            try:
                with urllib.request.urlopen(f"{base_url}/console/login/", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"daphne did not answer within 30 s; see {ARTIFACTS}/daphne.log")
            time.sleep(0.2)
        yield base_url
    finally:
        for process in processes:
            _stop(process)
        for log in logs:
            log.close()


@pytest.fixture(scope="package")
def browser(django_db_setup):
    """Headless Debian Chromium, shared by this package's tests. Started after the test
    database is set up and closed when the package ends, because Playwright's sync API
    keeps an event loop running in this thread, which async tests elsewhere must not see."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: `make test` installs Debian's chromium")
    # The ORM calls the tests make between browser steps are plain synchronous code; Django
    # only sees Playwright's loop in the thread and would refuse them.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
            )
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser, live_console):
    """A fresh Chinese-locale browser context on the live console; fails the test on any
    page error or Content-Security-Policy violation."""
    context = browser.new_context(
        base_url=live_console, locale="zh-CN", viewport={"width": 1440, "height": 960}
    )
    context.set_default_timeout(15_000)
    # Assertions wait as long as actions: on a loaded machine a fresh daphne's first API
    # request (lazy imports) can take longer than Playwright's 5 s default.
    expect.set_options(timeout=15_000)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on(
        "console",
        lambda message: (
            problems.append(f"console: {message.text}")
            if message.type == "error" and "Content Security Policy" in message.text
            else None
        ),
    )
    page.problems = problems
    yield page
    context.close()
    assert not problems, problems


@pytest.fixture
def signed_in(page, admin_user):
    """The page, signed in to the console as the platform admin through the login form."""
    page.goto("/console/login/")
    page.fill("input[name=username]", admin_user.get_username())
    page.fill("input[name=password]", STAFF_PASSWORD)
    page.click(".login-card button[type=submit]")
    page.wait_for_url("**/console/")
    return page


def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    """Save test-artifacts/console/<name>.png for a reviewer (the folder is git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def wait_for_terminal(run_id: str, timeout: float = 20.0) -> Run:
    """Poll the database until the worker (or this process) has finished the run."""
    deadline = time.monotonic() + timeout
    while True:
        run = Run.objects.get(pk=run_id)
        if run.is_terminal:
            return run
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{run_id} did not finish within {timeout} s (status {run.status})"
            )
        time.sleep(0.1)


@pytest.fixture
def finished_run(app, alice, live_console):
    """A run of a pinned agent, executed by the live task worker."""

    def run(*, owner=None, agent_key="researcher", input="北辰医药营收如何？") -> Run:
        created = start_run(user=owner or alice, app=app, agent_key=agent_key, input=input)
        return wait_for_terminal(created.pk)

    return run
