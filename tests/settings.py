"""Settings for the test suite: the product's settings with a fixed test key.

DATABASE_URL and REDIS_URL come from the environment (make test points them at
real PostgreSQL and Redis)."""

import os

os.environ.setdefault("SECRET_KEY", "sparktide-test-secret-key-not-for-production-use")
os.environ.setdefault("SPARKTIDE_REMOTE_ALLOWED_HOSTS", "127.0.0.1,localhost")
# The suite's servers speak plain HTTP on 127.0.0.1 (production defaults: on).
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("SECURE_HSTS_SECONDS", "0")

from sparktide.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
