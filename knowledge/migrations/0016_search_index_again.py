"""The chunks' GIN index on ``(version_id, search_vector)`` again (dropped by 0014 for
the marks' backfill), as 0013 built it, without a pending list (0010). A no-op on
SQLite."""

from django.db import migrations

INDEX = "knowledge_chunk_search_vector_gin"


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON knowledge_chunk"
            " USING gin (version_id, search_vector) WITH (fastupdate = off)"
        )


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0015_search_marks_backfill")]

    operations = [migrations.RunPython(create_index, drop_index)]
