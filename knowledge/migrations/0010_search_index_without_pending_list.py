"""The chunks' GIN index without a pending list, on PostgreSQL (a no-op on SQLite).

With GIN's default ``fastupdate``, new entries wait in a pending list (up to
``gin_pending_list_limit``, 4 MB) that every search reads in full, and the planner,
pricing that list into every index scan, chose a sequential scan of every chunk's
vector instead: 45–50 ms of a 10,000-chunk search's candidates statement instead of
4–5 ms (docs/retrieval.md). Ingest is not stopped for search, so the list is never
empty for long. Off, each chunk's entries go into the index as it is written; the
entries already pending are moved in now.
"""

from django.db import migrations

INDEX = "knowledge_chunk_search_vector_gin"


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER INDEX IF EXISTS {INDEX} SET (fastupdate = off)")
        schema_editor.execute(
            f"SELECT gin_clean_pending_list('{INDEX}'::regclass)"
            f" WHERE to_regclass('{INDEX}') IS NOT NULL"
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER INDEX IF EXISTS {INDEX} RESET (fastupdate)")


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0009_term_impact_bound")]
    operations = [migrations.RunPython(forward, backward)]
