"""SparkTide settings, read from the environment (see README "Configuration").

The embedded default needs nothing: SQLite under var/, an in-memory channel
layer and a database-backed task queue. Set DATABASE_URL / REDIS_URL to scale out.
"""

import secrets
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from foundation.env import env_bool, env_float, env_int, env_list, env_str, env_time_zone, env_url
from sparktide.dbpool import (
    bound_reconnect_backoff,
    check_connection,
    database_timeouts,
    process_role,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("SPARKTIDE_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)


def _secret_key() -> str:
    key = env_str("SECRET_KEY")
    if key:
        if len(key) < 32:
            raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters long")
        return key
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY is required when DEBUG is off")
    # Development only: a key generated once and kept under var/, so sessions
    # survive restarts without anyone committing a secret.
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Pages on other origins that may call the API (/v1/ only, django-cors-headers) and
# open its WebSockets (delivery/consumers.py reads the same list). Bearer
# tokens, never cookies: no credentials mode.
CORS_ALLOWED_ORIGINS = env_list("CORS_ALLOWED_ORIGINS", [])
CORS_URLS_REGEX = r"^/v1/"
CORS_ALLOW_CREDENTIALS = False

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "guardian",
    "channels",
    "django_tasks_db",
    "tenancy",
    "knowledge",
    "agents",
    "runs",
    "citations",
    "publication",
    "runtime",
    "delivery",
    "feedback",
    "provisioning",
    "console",
    "evaluation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    # Inside LocaleMiddleware, so every /v1 problem's detail is in the request's language.
    "sparktide.middleware.ApiProblemMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "sparktide.urls"
ASGI_APPLICATION = "sparktide.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context.display_time_zone",
            ],
        },
    },
]


# What this process is (web, worker or command): it sets how long it waits for
# the database and the server-side timeouts of its sessions (sparktide/dbpool.py).
SPARKTIDE_ROLE = process_role()


def _databases() -> dict[str, Any]:
    url = env_url("DATABASE_URL", schemes={"sqlite", "postgres", "postgresql", "pgsql"})
    if url is None:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{VAR_DIR / 'sparktide.sqlite3'}"
    config = dj_database_url.parse(url)
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # WAL lets the server read while the worker writes; IMMEDIATE takes the
        # write lock at BEGIN so two writers queue instead of failing mid-transaction.
        config["OPTIONS"] = {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=10000;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
        # Tests on SQLite use a file beside the database, not the in-memory default:
        # an in-memory database is shared-cache, where a reader and a writer on two
        # threads fail at once with "database table is locked" instead of waiting,
        # so the tests would not see the embedded default the demo runs.
        if config["NAME"] and config["NAME"] != ":memory:":
            config["TEST"] = {"NAME": str(Path(config["NAME"]).with_suffix(".test.sqlite3"))}
    else:
        # Under ASGI every thread would keep its own persistent connection and
        # exhaust PostgreSQL; a pool bounds them. CONN_MAX_AGE must stay 0 with it.
        timeouts = database_timeouts(SPARKTIDE_ROLE)
        config["OPTIONS"] = {
            "connect_timeout": timeouts.connect,
            # statement_timeout, lock_timeout, idle_in_transaction_session_timeout:
            # a frozen worker, a stuck statement or a held row lock is cut by the
            # server, not waited for (sparktide/dbpool.py, docs/deployment.md).
            "options": timeouts.server_options(),
        }
        # Under ASGI every thread would keep its own persistent connection and
        # exhaust PostgreSQL; a pool bounds them. CONN_MAX_AGE must stay 0 with it.
        if env_bool("SPARKTIDE_DB_POOL", True):
            bound_reconnect_backoff()
            config["OPTIONS"]["pool"] = {
                "min_size": 1,
                "max_size": env_int("SPARKTIDE_DB_POOL_SIZE", 20, minimum=2),
                # How long a checkout waits for a connection, by role: a web
                # process answers 503 DATABASE_UNAVAILABLE after 2 s, a worker
                # waits through an outage of two minutes (sparktide/dbpool.py).
                "timeout": timeouts.wait,
                # A connection whose backend died (failover, restart, idle
                # timeout) is dropped when handed out, not given to a request,
                # and the pool's other idle connections are checked with it.
                # Otherwise psycopg_pool's defaults: reconnect_timeout 300 s of
                # attempts (every ~0.5 s, dbpool.bound_reconnect_backoff) before a
                # slot is given up and regrown on demand, max_lifetime 1 h and
                # max_idle 10 min.
                "check": check_connection,
            }
        if not env_bool("SPARKTIDE_DB_PREPARE", True):
            # Behind a pooler that does not keep a session per client (PgBouncer in
            # transaction mode) nothing may be prepared (foundation/compiled.py).
            config["OPTIONS"]["prepare_threshold"] = None
        config["CONN_MAX_AGE"] = 0
    return {"default": config}


DATABASES = _databases()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def _channel_layers() -> dict[str, Any]:
    redis_url = env_url("REDIS_URL", schemes={"redis", "rediss", "unix"})
    if redis_url is None:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    return {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # The Redis client's default pool (100) runs dry with a few hundred sockets.
                "hosts": [
                    {
                        "address": redis_url,
                        "max_connections": env_int(
                            "SPARKTIDE_REDIS_MAX_CONNECTIONS", 1000, minimum=10
                        ),
                    }
                ],
                "prefix": env_str("SPARKTIDE_CHANNEL_PREFIX", "sparktide"),
            },
        }
    }


REDIS_URL = env_url("REDIS_URL", schemes={"redis", "rediss", "unix"})
CHANNEL_LAYERS = _channel_layers()

TASKS = {
    "default": {
        "BACKEND": env_str("SPARKTIDE_TASK_BACKEND", "django_tasks_db.DatabaseBackend"),
    }
}

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
ANONYMOUS_USER_NAME = None  # guardian: no anonymous user row

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "zh-hans"
LANGUAGES = [("zh-hans", "简体中文"), ("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# The zone the console shows times in (with its name); storage and the API stay UTC.
SPARKTIDE_DISPLAY_TIME_ZONE = env_time_zone("SPARKTIDE_DISPLAY_TIME_ZONE", "Asia/Shanghai")

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise scans it at start
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

LOGIN_URL = "console:login"
LOGIN_REDIRECT_URL = "console:home"

# Console security: no inline script anywhere, framing refused, cookies kept
# from scripts and (outside DEBUG) from plain HTTP.
from django.utils.csp import CSP  # noqa: E402

SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF, "ws:", "wss:"],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "object-src": [CSP.NONE],
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SAMESITE = "Lax"
# Behind TLS (the default outside DEBUG): HTTP is redirected to HTTPS, browsers
# are told to stay on HTTPS, and the proxy's X-Forwarded-Proto says which it was.
# A deployment serving plain HTTP on purpose (a test, a private network) turns
# them off: SECURE_SSL_REDIRECT=0 SECURE_HSTS_SECONDS=0.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = False
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("SECURE_PROXY_SSL_HEADER", not DEBUG) else None
)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["tenancy.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["sparktide.parsers.BoundedJSONParser"],
    "EXCEPTION_HANDLER": "foundation.errors.problem_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "SparkTide API",
    "DESCRIPTION": "Runs, events, answers and re-authorized citation previews.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # docs/api.md: the reference is offline — Swagger UI and Redoc from the sidecar.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "sparktide.ops.apidocs.error_responses",
    ],
}

# --- SparkTide's own settings -------------------------------------------------
# SSRF allow-list for REMOTE knowledge endpoints: host or host:port entries.
# With DEBUG (development, the demo) a knowledge endpoint on this machine is
# allowed by default; in production nothing is until the operator lists it.
SPARKTIDE_REMOTE_ALLOWED_HOSTS = env_list(
    "SPARKTIDE_REMOTE_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else []
)
# Upper bound of any REMOTE call (retrieval and preview re-fetch), in seconds.
SPARKTIDE_REMOTE_TIMEOUT_CAP = env_float(
    "SPARKTIDE_REMOTE_TIMEOUT_CAP", 15.0, minimum=0.05, maximum=15.0
)
# Evaluation sets the console's 评测 page offers per app: <dir>/<app slug>/*.yaml|*.json
# (docs/evaluation.md). The demo's by default; "" offers none (upload a set instead).
SPARKTIDE_EVALUATION_SETS_DIR = env_str(
    "SPARKTIDE_EVALUATION_SETS_DIR", str(BASE_DIR / "demo" / "evaluation")
)
# The embedded default: run tasks in a thread of the ASGI process (scripts/demo).
SPARKTIDE_INPROCESS_WORKER = env_bool("SPARKTIDE_INPROCESS_WORKER", False)
# Fault injection for recovery tests; never set in production.
SPARKTIDE_FAULT = env_str("SPARKTIDE_FAULT", "")
# Ticket lifetime for WebSocket authentication, in seconds.
SPARKTIDE_WS_TICKET_TTL = env_int("SPARKTIDE_WS_TICKET_TTL", 60, minimum=5, maximum=600)
# Event delivery over WebSocket (docs/events.md). The database log is the truth;
# a connection re-reads it this often even when no wake-up arrives.
SPARKTIDE_WS_POLL_SECONDS = env_float(
    "SPARKTIDE_WS_POLL_SECONDS", 1.5, minimum=0.01, maximum=3600.0
)
# Events read, hydrated and sent per database round trip.
SPARKTIDE_WS_PAGE_SIZE = env_int("SPARKTIDE_WS_PAGE_SIZE", 200, minimum=1, maximum=1000)
# Sent-but-unacknowledged events an acking client may have before sending pauses.
SPARKTIDE_WS_ACK_WINDOW = env_int("SPARKTIDE_WS_ACK_WINDOW", 1000, minimum=1, maximum=100_000)
# How long a client may sit at its window without acking before close 4408.
SPARKTIDE_WS_SLOW_CLIENT_SECONDS = env_float(
    "SPARKTIDE_WS_SLOW_CLIENT_SECONDS", 10.0, minimum=0.01, maximum=3600.0
)

# Task workers (manage.py run_worker, and the in-process worker of the demo):
# runs executed at once per process (threads; each holds one database
# connection while it runs, so a worker's SPARKTIDE_DB_POOL_SIZE should be at
# least this + 4 — see docs/deployment.md).
SPARKTIDE_WORKER_CONCURRENCY = env_int("SPARKTIDE_WORKER_CONCURRENCY", 16, minimum=1, maximum=256)
# A running run says it is alive this often (docs/reliability.md).
SPARKTIDE_HEARTBEAT_SECONDS = env_float(
    "SPARKTIDE_HEARTBEAT_SECONDS", 5.0, minimum=0.1, maximum=300.0
)
# A RUNNING run silent for this long is taken as lost and recovered by the next
# sweep of any live worker; a stale run ends within STALE_AFTER + SWEEP.
SPARKTIDE_STALE_AFTER_SECONDS = env_float(
    "SPARKTIDE_STALE_AFTER_SECONDS", 30.0, minimum=0.3, maximum=86_400.0
)
SPARKTIDE_SWEEP_SECONDS = env_float("SPARKTIDE_SWEEP_SECONDS", 10.0, minimum=0.1, maximum=3600.0)
# On SIGTERM a worker stops claiming and lets in-flight runs finish this long.
SPARKTIDE_WORKER_GRACE_SECONDS = env_float(
    "SPARKTIDE_WORKER_GRACE_SECONDS", 30.0, minimum=0.0, maximum=3600.0
)
if SPARKTIDE_STALE_AFTER_SECONDS < 3 * SPARKTIDE_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        "SPARKTIDE_STALE_AFTER_SECONDS must be at least 3 × SPARKTIDE_HEARTBEAT_SECONDS, "
        "or a live run could be taken as lost"
    )

# One handler on the root logger (so no line is written twice); JSON lines with
# LOG_FORMAT=json (python-json-logger), the structured fields of
# foundation/observability.py included.
LOG_FORMAT = env_str("LOG_FORMAT", "text")
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be text or json, got {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "filters": {"client_fault": {"()": "sparktide.log_filters.ClientFaultAsWarning"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.tasks": {"level": "WARNING"},
        # A 4xx is a client's answer, written once by the server's access log (daphne: one
        # line per request with its status); django.request would log it a second time.
        # 5xx stay, with their traceback.
        "django.request": {"level": "ERROR"},
        # A Host outside ALLOWED_HOSTS is answered 400: a warning line, not an ERROR
        # with a traceback (sparktide/log_filters.py).
        "django.security.DisallowedHost": {"filters": ["client_fault"]},
    },
}
# Prometheus metrics at /metrics (docs/operations.md); off unless asked for.
SPARKTIDE_METRICS = env_bool("SPARKTIDE_METRICS", False)
# /readyz: a task waiting longer than this (no worker takes it), or a running
# run whose heartbeat is older, makes the worker check fail.
SPARKTIDE_READY_WORKER_SECONDS = env_int(
    "SPARKTIDE_READY_WORKER_SECONDS", 120, minimum=5, maximum=86_400
)
