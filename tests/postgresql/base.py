"""The suite's PostgreSQL backend: the product's own (``django.db.backends.postgresql``) with
one change, in how a transactional test empties the database after it.

Django flushes with one ``TRUNCATE`` of every table. PostgreSQL gives each truncated table new
files and syncs them at commit, a fixed cost per table whatever it holds: over this schema
about a second, on every ``transaction=True`` test's teardown — most of the time of the
suite's PostgreSQL pass. A test leaves a few rows, so ``DELETE FROM`` each table, in one
transaction, empties them in a few milliseconds. Every foreign key Django creates is
``DEFERRABLE INITIALLY DEFERRED`` and none cascades, so the order of the deletes does not
matter: the keys are checked at the commit, when every table is empty. A flush that resets
sequences (``reset_sequences=True``) still truncates."""

from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or not tables:
            return super().sql_flush(
                style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
            for table in tables
        ]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
