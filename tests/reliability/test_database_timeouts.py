"""Each role's sessions carry its own server-side bounds (sparktide/dbpool.py)."""

import os
import subprocess
import sys

import pytest
from django.db import connection

from sparktide.dbpool import database_timeouts, process_role

pytestmark = pytest.mark.django_db(transaction=True)


def run_as(role: str, code: str, **env: str) -> subprocess.CompletedProcess:
    """``code`` in a process of ``role`` on the test database, through the product's settings."""
    params = connection.settings_dict
    url = f"postgres://{params['USER']}@{params['HOST']}:{params['PORT']}/{params['NAME']}"
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()\n" + code],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": url,
            "SPARKTIDE_ROLE": role,
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_role_comes_from_how_the_process_starts(monkeypatch):
    monkeypatch.delenv("SPARKTIDE_ROLE", raising=False)
    assert process_role(["/srv/venv/bin/daphne", "sparktide.asgi:application"]) == "web"
    assert process_role(["/usr/lib/python3/site-packages/daphne/__main__.py", "x"]) == "web"
    assert process_role(["manage.py", "run_worker"]) == "worker"
    assert process_role(["manage.py", "migrate"]) == "command"
    monkeypatch.setenv("SPARKTIDE_ROLE", "worker")
    assert process_role(["/srv/venv/bin/daphne"]) == "worker"


def test_web_answers_fast_and_workers_wait_through_an_outage():
    web, worker = database_timeouts("web"), database_timeouts("worker")
    assert web.wait <= 2 and worker.wait >= 60
    # A frozen worker's lock is cut well inside the stale window (30 s by default).
    assert 0 < worker.idle_in_transaction < 30
    assert 0 < web.lock < web.statement


def test_a_statement_past_the_statement_timeout_is_cut():
    """A web session running longer than SPARKTIDE_DB_STATEMENT_TIMEOUT is cancelled by PostgreSQL."""
    done = run_as(
        "web",
        "from django.db import connection, OperationalError\n"
        "try:\n"
        "    connection.cursor().execute('SELECT pg_sleep(3)')\n"
        "    print('finished')\n"
        "except OperationalError as exc:\n"
        "    print('cut', type(exc.__cause__).__name__)\n",
        SPARKTIDE_DB_STATEMENT_TIMEOUT="0.3",
    )
    assert done.stdout.strip() == "cut QueryCanceled", done.stderr


def test_an_idle_in_transaction_session_is_cut():
    """A worker session left idle inside a transaction is ended by PostgreSQL, its locks freed."""
    done = run_as(
        "worker",
        "import time\n"
        "from django.db import DatabaseError, connection, transaction\n"
        "try:\n"
        "    with transaction.atomic():\n"
        "        connection.cursor().execute('SELECT 1')\n"
        "        time.sleep(1.5)\n"
        "        connection.cursor().execute('SELECT 1')\n"
        "    print('finished')\n"
        "except DatabaseError as exc:\n"
        "    print('cut', 'idle-in-transaction timeout' in str(exc))\n",
        SPARKTIDE_DB_IDLE_IN_TRANSACTION_TIMEOUT="0.5",
    )
    assert done.stdout.strip() == "cut True", (done.stdout, done.stderr)


def test_commands_carry_no_statement_timeout():
    """Migrations and archive_runs may run long: a command's sessions are not bounded."""
    done = run_as(
        "command",
        "from django.db import connection\n"
        "c = connection.cursor()\n"
        "c.execute('SHOW statement_timeout'); print(c.fetchone()[0])\n",
    )
    assert done.stdout.strip() == "0", done.stderr
