import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge.text import search_tokens, utf16_len, utf16_slice

ROOT = Path(__file__).resolve().parents[1]
SETTINGS_FROM_ENV = {
    "DATABASE_URL",
    "REDIS_URL",
    "SECRET_KEY",
    "DEBUG",
    "SPARKTIDE_REMOTE_ALLOWED_HOSTS",
}


def _check_settings(env: dict, code: str = "") -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in SETTINGS_FROM_ENV}
    full.update(env)
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()\n" + code],
        env={**full, "DJANGO_SETTINGS_MODULE": "sparktide.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"DEBUG": "maybe"}, "DEBUG"),
        ({"DEBUG": "0"}, "SECRET_KEY"),
        ({"DEBUG": "1", "DATABASE_URL": "mysql://x/y"}, "DATABASE_URL"),
        ({"DEBUG": "1", "REDIS_URL": "http://localhost"}, "REDIS_URL"),
        ({"DEBUG": "0", "SECRET_KEY": "short"}, "SECRET_KEY"),
        ({"DEBUG": "1", "SPARKTIDE_REMOTE_TIMEOUT_CAP": "60"}, "SPARKTIDE_REMOTE_TIMEOUT_CAP"),
    ],
)
def test_settings_reject_bad_values_naming_the_variable(env, variable):
    result = _check_settings(env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert variable in result.stderr


def test_settings_accept_the_embedded_default(tmp_path):
    result = _check_settings({"DEBUG": "1", "SPARKTIDE_VAR_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "secret_key").exists()


def test_utf16_helpers_count_surrogate_pairs():
    text = "营收😀增长"
    assert utf16_len(text) == 6
    assert utf16_slice(text, 2, 4) == "😀"


def test_search_tokens_make_chinese_bigrams_and_ascii_words():
    assert search_tokens("北辰医药营收 Q3 growth") == [
        "北辰",
        "辰医",
        "医药",
        "药营",
        "营收",
        "q3",
        "growth",
    ]


@pytest.mark.parametrize(
    ("debug", "expected"), [("1", "['127.0.0.1', 'localhost', '[::1]']"), ("0", "[]")]
)
def test_remote_knowledge_may_reach_this_machine_by_default_only_in_development(
    debug, expected, tmp_path
):
    result = _check_settings(
        {"DEBUG": debug, "SECRET_KEY": "k" * 40, "SPARKTIDE_VAR_DIR": str(tmp_path)},
        "from django.conf import settings; print(settings.SPARKTIDE_REMOTE_ALLOWED_HOSTS)",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def test_manage_py_in_a_developers_shell_uses_the_development_settings(tmp_path):
    """Neither SECRET_KEY nor DEBUG set: manage.py runs on the embedded default."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in SETTINGS_FROM_ENV | {"DJANGO_SETTINGS_MODULE"}
    }
    env["SPARKTIDE_VAR_DIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "secret_key").exists()


def test_manage_py_with_debug_off_still_requires_a_secret_key(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in SETTINGS_FROM_ENV | {"DJANGO_SETTINGS_MODULE"}
    }
    env.update(SPARKTIDE_VAR_DIR=str(tmp_path), DEBUG="0")
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "SECRET_KEY is required when DEBUG is off" in result.stderr


@pytest.mark.parametrize(("prepare", "expected"), [("0", "None"), ("1", "absent")])
def test_sparktide_db_prepare_0_turns_preparing_off_for_a_transaction_pooler(prepare, expected):
    result = _check_settings(
        {
            "DEBUG": "1",
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/sparktide",
            "SPARKTIDE_DB_PREPARE": prepare,
        },
        "from django.conf import settings\n"
        "print(settings.DATABASES['default']['OPTIONS'].get('prepare_threshold', 'absent'))",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def test_tests_on_the_embedded_default_use_a_file_like_the_demo(tmp_path):
    """In-memory SQLite is shared-cache: a read beside a write fails at once ("database table
    is locked") where the demo's file database waits, so SQLite test runs use a file."""
    result = _check_settings(
        {"DEBUG": "1", "SPARKTIDE_VAR_DIR": str(tmp_path)},
        "from django.conf import settings\nprint(settings.DATABASES['default']['TEST']['NAME'])",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "sparktide.test.sqlite3")
