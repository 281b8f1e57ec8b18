"""Retention (runs/retention.py) on unsaved rows: a run is gone for replay and preview once it
is archived or older than its app's window, and exactly at the window's edge it is still there."""

from datetime import UTC, datetime, timedelta

import pytest

from foundation.errors import ErrorCode, SparkTideError
from runs.models import Run
from runs.retention import is_expired, require_within_retention, retention_cutoff
from tenancy.models import App

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _run(age: timedelta, *, days: int = 30, archived: bool = False) -> Run:
    return Run(
        app=App(retention_days=days),
        created_at=NOW - age,
        archived_at=NOW if archived else None,
    )


def test_the_cutoff_is_the_apps_window_before_now():
    assert retention_cutoff(App(retention_days=7), NOW) == NOW - timedelta(days=7)


def test_the_cutoff_defaults_to_the_current_time():
    before = datetime.now(UTC)
    cutoff = retention_cutoff(App(retention_days=2))
    after = datetime.now(UTC)
    assert before - timedelta(days=2) <= cutoff <= after - timedelta(days=2)


def test_a_run_inside_its_window_is_not_expired():
    assert not is_expired(_run(timedelta(days=29)), NOW)


def test_a_run_exactly_at_the_edge_of_its_window_is_not_expired():
    assert not is_expired(_run(timedelta(days=30)), NOW)


def test_a_run_just_past_its_window_is_expired():
    assert is_expired(_run(timedelta(days=30, seconds=1)), NOW)


def test_an_archived_run_is_expired_however_young():
    assert is_expired(_run(timedelta(0), archived=True), NOW)


def test_the_window_is_the_apps_own():
    assert not is_expired(_run(timedelta(days=45), days=60), NOW)
    assert is_expired(_run(timedelta(days=45), days=40), NOW)


def test_an_expired_run_is_event_cursor_expired():
    run = Run(app=App(retention_days=1), created_at=datetime.now(UTC) - timedelta(days=2))
    with pytest.raises(SparkTideError) as raised:
        require_within_retention(run)
    assert raised.value.code == ErrorCode.EVENT_CURSOR_EXPIRED


def test_a_run_within_retention_passes():
    require_within_retention(Run(app=App(retention_days=1), created_at=datetime.now(UTC)))
