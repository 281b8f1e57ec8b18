"""The stored vector again (dropped by 0014), now with each chunk's marks: on PostgreSQL
``search_vector`` is the parsed tokens of ``search_text``, as before, plus each mark of
``search_marks`` as a lexeme as written (``array_to_tsvector``: no parsing; a mark holds
``knowledge.text.MARK``, which no parsed token does), and the GIN index on
``(version_id, search_vector)`` as 0013 built it, without a pending list (0010). A
search asks for a mark only where one occurrence of its token cannot weigh enough
(``knowledge.candidates.reaching``). A no-op on SQLite (a substring of ``search_marks``).
"""

from django.db import migrations

INDEX = "knowledge_chunk_search_vector_gin"
FORWARD = (
    "ALTER TABLE knowledge_chunk ADD COLUMN search_vector tsvector GENERATED ALWAYS AS"
    " (to_tsvector('simple'::regconfig, COALESCE(search_text, ''))"
    " || array_to_tsvector(string_to_array(search_marks, ' '))) STORED",
    f"CREATE INDEX {INDEX} ON knowledge_chunk"
    " USING gin (version_id, search_vector) WITH (fastupdate = off)",
)
BACKWARD = ("ALTER TABLE knowledge_chunk DROP COLUMN IF EXISTS search_vector",)


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in FORWARD:
            schema_editor.execute(sql)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in BACKWARD:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0015_search_marks_backfill")]

    operations = [migrations.RunPython(forward, backward)]
