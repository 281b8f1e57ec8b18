import os
import subprocess
import sys

import pytest

from sparktide.knowledge.text import search_tokens, utf16_len, utf16_slice

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
