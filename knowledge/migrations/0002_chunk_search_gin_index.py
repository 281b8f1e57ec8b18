"""GIN index for chunk search on PostgreSQL (a no-op on SQLite).

The expression must match what retrieval queries with
SearchVector("search_text", config="simple") so the planner can use it.
"""

from django.db import migrations

INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS knowledge_chunk_search_gin ON knowledge_chunk "
    "USING gin (to_tsvector('simple'::regconfig, COALESCE(search_text, '')))"
)


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(INDEX_SQL)


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS knowledge_chunk_search_gin")


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0001_knowledge_versions_documents_chunks")]
    operations = [migrations.RunPython(create_index, drop_index)]
