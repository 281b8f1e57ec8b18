"""How a process waits for PostgreSQL, by role (docs/deployment.md "Database timeouts").

A web process (daphne) answers 503 DATABASE_UNAVAILABLE fast while the database is
away and serves again within about a second of its return; a worker (run_worker)
waits through an outage at the next connection it needs, so a run whose worker is
alive outlives it. Both get server-side bounds, so a frozen or stuck session cannot
hold a run's row lock for long:

==========  =====  =======  =========  ====  ===================
role        wait   connect  statement  lock  idle in transaction
==========  =====  =======  =========  ====  ===================
web           2 s      2 s       15 s   3 s                 10 s
worker      120 s      2 s       60 s  10 s                 15 s
command      30 s      5 s        off   off                  off
==========  =====  =======  =========  ====  ===================

``wait`` is psycopg_pool's ``timeout`` (how long a checkout waits for a connection);
``connect`` is libpq's ``connect_timeout``; the last three are PostgreSQL settings
sent with every connection (``options``). Each is overridden by its own variable.
"""

import logging
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from foundation.env import env_float, env_str

logger = logging.getLogger(__name__)

ROLES = ("web", "worker", "command")


@dataclass(frozen=True)
class DatabaseTimeouts:
    wait: float
    connect: int
    statement: float
    lock: float
    idle_in_transaction: float

    def server_options(self) -> str:
        """libpq ``options``: the three PostgreSQL settings, in milliseconds (0 = off)."""
        settings = {
            "statement_timeout": self.statement,
            "lock_timeout": self.lock,
            "idle_in_transaction_session_timeout": self.idle_in_transaction,
        }
        return " ".join(f"-c {name}={round(value * 1000)}" for name, value in settings.items())


_DEFAULTS = {
    "web": DatabaseTimeouts(wait=2, connect=2, statement=15, lock=3, idle_in_transaction=10),
    "worker": DatabaseTimeouts(wait=120, connect=2, statement=60, lock=10, idle_in_transaction=15),
    "command": DatabaseTimeouts(wait=30, connect=5, statement=0, lock=0, idle_in_transaction=0),
}


def process_role(argv: list[str] | None = None) -> str:
    """``SPARKTIDE_ROLE``, else what started the process: daphne (or runserver) is
    ``web``, ``manage.py run_worker`` is ``worker``, anything else a ``command``."""
    role = env_str("SPARKTIDE_ROLE").strip()
    if role:
        if role not in ROLES:
            raise ImproperlyConfigured(f"SPARKTIDE_ROLE must be one of {', '.join(ROLES)}")
        return role
    argv = sys.argv if argv is None else argv
    program = Path(argv[0]) if argv else Path()
    # ``python -m daphne`` starts as …/daphne/__main__.py.
    name = program.parent.name if program.name == "__main__.py" else program.name
    command = argv[1] if len(argv) > 1 else ""
    if command == "run_worker":
        return "worker"
    if name in ("daphne", "uvicorn", "gunicorn") or command == "runserver":
        return "web"
    return "command"


def database_timeouts(role: str) -> DatabaseTimeouts:
    base = _DEFAULTS[role]
    return DatabaseTimeouts(
        wait=env_float("SPARKTIDE_DB_WAIT_SECONDS", base.wait, minimum=0.1, maximum=3600),
        # libpq counts whole seconds and takes anything under 2 as 2.
        connect=round(
            env_float("SPARKTIDE_DB_CONNECT_TIMEOUT", base.connect, minimum=2, maximum=600)
        ),
        statement=env_float(
            "SPARKTIDE_DB_STATEMENT_TIMEOUT", base.statement, minimum=0, maximum=86_400
        ),
        lock=env_float("SPARKTIDE_DB_LOCK_TIMEOUT", base.lock, minimum=0, maximum=86_400),
        idle_in_transaction=env_float(
            "SPARKTIDE_DB_IDLE_IN_TRANSACTION_TIMEOUT",
            base.idle_in_transaction,
            minimum=0,
            maximum=86_400,
        ),
    )


def bound_reconnect_backoff() -> None:
    """Retry a lost database every ~0.5 s instead of backing off 1, 2, 4 … s.

    psycopg_pool doubles the delay between attempts to refill a slot (and between
    checkouts of connections that fail their check), so after a 20 s outage the
    next attempt could come 8–16 s after the database was back. An attempt costs
    one refused connect (or ``connect_timeout`` when the host is unreachable) on
    the pool's own threads, so a constant half second is cheap. Process-wide: the
    pool is psycopg_pool's only user here.
    """
    from psycopg_pool.base import AttemptWithBackoff

    AttemptWithBackoff.INITIAL_DELAY = 0.5
    AttemptWithBackoff.DELAY_BACKOFF = 1.0


_checking: set[int] = set()
_checking_lock = threading.Lock()


def check_connection(conn: Any) -> None:
    """The pool's check of a connection it hands out; one that fails also has the
    pool check its other idle connections, in a thread of its own.

    A restart or failover kills every idle connection at once. Found one at a time
    by checkouts, a pool of twenty dead connections cost a request each (each
    failed check waits the back-off): the web process answered 503 for seconds
    after the database was back. One failure now clears them all.
    """
    from psycopg_pool import ConnectionPool

    try:
        ConnectionPool.check_connection(conn)
    except Exception:
        pool = getattr(conn, "_pool", None)
        if pool is not None:
            _check_idle(pool)
        raise


def _check_idle(pool: Any) -> None:
    with _checking_lock:
        if id(pool) in _checking:
            return
        _checking.add(id(pool))

    def check() -> None:
        try:
            pool.check()
        except Exception as exc:  # the database is still away: the pool's refill goes on
            logger.debug("pool check failed: %s", exc)
        finally:
            with _checking_lock:
                _checking.discard(id(pool))

    threading.Thread(target=check, name="sparktide-pool-check", daemon=True).start()
