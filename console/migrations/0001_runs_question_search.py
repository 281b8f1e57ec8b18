"""The runs lists' question search (REST ``q``, the console's 问题包含) is a case-insensitive
substring match, ``UPPER(input) LIKE UPPER('%…%')``: on PostgreSQL a trigram GIN index on
UPPER(input) serves it, so the search does not read every run. SQLite has no such index; its
search reads the rows the other filters leave. The index is no field's, so the models'
state does not change."""

from django.db import migrations

INDEX = "run_input_upper_trgm"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    schema_editor.execute(
        f"CREATE INDEX IF NOT EXISTS {INDEX} ON runs_run USING gin (UPPER(input) gin_trgm_ops)"
    )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("runs", "0001_runs_events_journal")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
