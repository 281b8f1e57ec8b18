"""The error vocabulary: each code fixes its HTTP status and default detail, and
no raise site names a status (issue 10, "One error vocabulary")."""

import re
from http import HTTPStatus
from pathlib import Path

import pytest
from django.utils.translation import override

from foundation.errors import ErrorCode, SparkTideError, wire_codes
from foundation.reason_phrases import complete_reason_phrases

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ["citations", "console", "publication", "runs", "sparktide"]


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_code_carries_a_real_http_status_and_a_default_detail_in_both_languages(code):
    assert HTTPStatus(code.status).phrase
    error = SparkTideError(code)
    assert error.status == code.status
    with override("zh-hans"):
        chinese = error.detail
    with override("en"):
        english = error.detail
    assert chinese and english and chinese != english
    assert english.isascii()


def test_a_raise_site_names_the_code_and_the_status_follows():
    error = SparkTideError(ErrorCode.AGENT_NOT_AVAILABLE, detail="x")
    assert (error.status, error.problem()["title"]) == (422, "Unprocessable Content")


def test_a_revoked_version_and_a_missing_lease_share_one_wire_code_with_two_statuses():
    revoked = SparkTideError(ErrorCode.CAPABILITY_REVOKED).problem()
    lease = SparkTideError(ErrorCode.CAPABILITY_UNAVAILABLE).problem()
    assert (revoked["code"], revoked["status"]) == ("CAPABILITY_UNAVAILABLE", 409)
    assert (lease["code"], lease["status"]) == ("CAPABILITY_UNAVAILABLE", 503)
    assert wire_codes().count("CAPABILITY_UNAVAILABLE") == 1


def test_a_status_that_contradicts_the_code_is_refused():
    with pytest.raises(TypeError):
        SparkTideError(ErrorCode.RESOURCE_NOT_FOUND, 403, "x")


_STATUS_AT_RAISE_SITE = re.compile(r"SparkTideError\(\s*[\w.]+,\s*\d{3}\b")


def test_no_raise_site_in_the_product_names_a_status():
    offenders = [
        f"{path.relative_to(ROOT)}:{text[: match.start()].count(chr(10)) + 1}"
        for package in PRODUCT
        for path in (ROOT / package).rglob("*.py")
        for text in [path.read_text()]
        for match in _STATUS_AT_RAISE_SITE.finditer(text)
    ]
    assert offenders == []


def test_twisted_knows_every_reason_phrase_once_completed():
    from twisted.web import http

    complete_reason_phrases()
    assert http.RESPONSES[422] == b"Unprocessable Content"
    assert all(status.value in http.RESPONSES for status in HTTPStatus)
