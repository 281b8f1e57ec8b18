"""A stored tsvector for chunk search on PostgreSQL (a no-op on SQLite).

Retrieval used to rank with ``to_tsvector('simple', COALESCE(search_text, ''))``:
the GIN index could find the matching rows, but every matching row's text was
parsed again to filter and again to rank — at 10k chunks ~2.5 times the cost of
ranking a stored vector (docs/performance.md). ``search_vector`` is that same
expression, generated and stored by PostgreSQL, so it can never disagree with
``search_text``; the GIN index moves to it. The model does not declare the
column: only ``retrieval._search_postgresql`` reads it.
"""

from django.db import migrations

FORWARD = (
    "ALTER TABLE knowledge_chunk ADD COLUMN IF NOT EXISTS search_vector tsvector"
    " GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, COALESCE(search_text, ''))) STORED",
    "CREATE INDEX IF NOT EXISTS knowledge_chunk_search_vector_gin"
    " ON knowledge_chunk USING gin (search_vector)",
    "DROP INDEX IF EXISTS knowledge_chunk_search_gin",
)
BACKWARD = (
    "CREATE INDEX IF NOT EXISTS knowledge_chunk_search_gin ON knowledge_chunk"
    " USING gin (to_tsvector('simple'::regconfig, COALESCE(search_text, '')))",
    "DROP INDEX IF EXISTS knowledge_chunk_search_vector_gin",
    "ALTER TABLE knowledge_chunk DROP COLUMN IF EXISTS search_vector",
)


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in FORWARD:
            schema_editor.execute(sql)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in BACKWARD:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0003_fact_label")]
    operations = [migrations.RunPython(forward, backward)]
