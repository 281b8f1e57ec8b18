"""Reason phrases for every status SparkTide answers, under daphne too.

ASGI carries a status code but no reason phrase; daphne lets Twisted pick it
from ``twisted.web.http.RESPONSES``, which lacks 422 and a few others and then
sends "Unknown Status". Filling the table from ``http.HTTPStatus`` (the same
phrases Django and the problem ``title`` use) once at start fixes the status line.
"""

from http import HTTPStatus


def complete_reason_phrases() -> None:
    try:
        from twisted.web import http
    except ImportError:  # not served by daphne
        return
    for status in HTTPStatus:
        http.RESPONSES.setdefault(status.value, status.phrase.encode("ascii"))
