"""The budget tests reuse Publication's fixtures: real scripted runs, real citations."""

from tests.publication.conftest import knowledge, live_run, make_run, publish  # noqa: F401
