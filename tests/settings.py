"""Settings for the test suite: the product's settings with a fixed test key.

DATABASE_URL and REDIS_URL come from the environment (make test points them at
real PostgreSQL and Redis)."""

import os

os.environ.setdefault("SECRET_KEY", "sparktide-test-secret-key-not-for-production-use")
os.environ.setdefault("SPARKTIDE_REMOTE_ALLOWED_HOSTS", "127.0.0.1,localhost")
# The suite's servers speak plain HTTP on 127.0.0.1 (production defaults: on).
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("SECURE_HSTS_SECONDS", "0")


def _own_redis_database(url: str, worker: str) -> str:
    """``make test`` runs the suite in parallel (pytest-xdist): each worker has its own test
    database (pytest-django suffixes its name with ``_gw<N>``) and, from here, its own Redis
    database — REDIS_URL's number plus N — so no worker's channel groups reach another's."""
    base, _, number = url.rpartition("/")
    own = int(number or 0) + int(worker.removeprefix("gw"))
    if own > 15:
        raise RuntimeError(f"REDIS_URL {url}: worker {worker} would need Redis database {own}")
    return f"{base}/{own}"


_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
# Once: a child process started by a test inherits the worker's already-moved REDIS_URL.
if os.environ.get("REDIS_URL") and _worker and os.environ.get("SPARKTIDE_TEST_WORKER") != _worker:
    os.environ["REDIS_URL"] = _own_redis_database(os.environ["REDIS_URL"], _worker)
    os.environ["SPARKTIDE_TEST_WORKER"] = _worker

from sparktide.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# A transactional test's flush deletes rows instead of truncating every table
# (tests/postgresql/base.py): the product's backend otherwise.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":  # noqa: F405
    DATABASES["default"]["ENGINE"] = "tests.postgresql"  # noqa: F405
