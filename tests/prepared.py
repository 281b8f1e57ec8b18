"""The server-side prepared statements of this test's connection, counted from a point.

A test's connection outlives the test: what earlier tests of the same process prepared on
it is still there, run so many times. So a test counts what ran *since* it began."""

from django.db import connection


def prepared() -> dict[str, int]:
    """Each statement prepared on this connection → how often it ran."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return dict(cursor.fetchall())


class Since:
    """``Since().runs(prefix)``: how often each prepared statement beginning with
    ``prefix`` ran since this point, those that did — one statement prepared once and run
    three times is [3]; the same text prepared anew each time would be [1, 1, 1]."""

    def __init__(self) -> None:
        self.before = prepared()

    def runs(self, prefix: str, *, excluding: str | None = None) -> list[int]:
        return sorted(
            runs - self.before.get(sql, 0)
            for sql, runs in prepared().items()
            if sql.startswith(prefix)
            and (excluding is None or excluding not in sql)
            and runs != self.before.get(sql)
        )
