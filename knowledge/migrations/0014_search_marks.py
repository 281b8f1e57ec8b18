"""Each chunk's marks (``Chunk.search_marks``: the tokens it holds more than once,
``knowledge.text.search_marks``), filled by 0015 and indexed with the tokens by 0016;
each term's single impact (``VersionTerm.single``: its most in a chunk holding it once),
stored at publish from now on and by ``manage.py index_knowledge`` for the versions
published before.

PostgreSQL: the stored vector (and with it the GIN index) is dropped now, so the
backfill (0015) neither recomputes a vector nor maintains the index for every row it
rewrites; 0016 adds it back with the marks. From here to 0016 the chunks are not
searchable on PostgreSQL: run 0014–0016 together (``manage.py migrate knowledge``), with
ingest stopped.
"""

from django.db import migrations, models

INDEX = "knowledge_chunk_search_vector_gin"
BACKWARD = (
    "ALTER TABLE knowledge_chunk ADD COLUMN IF NOT EXISTS search_vector tsvector"
    " GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, COALESCE(search_text, '')))"
    " STORED",
    f"CREATE INDEX IF NOT EXISTS {INDEX} ON knowledge_chunk"
    " USING gin (version_id, search_vector) WITH (fastupdate = off)",
)


def drop_vector(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE knowledge_chunk DROP COLUMN IF EXISTS search_vector")


def restore_vector(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in BACKWARD:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0013_chunk_version_index")]

    operations = [
        migrations.AddField(
            model_name="chunk",
            name="search_marks",
            field=models.TextField(
                blank=True,
                default="",
                help_text="片段中出现两次及以上的检索词（带标记）",
                verbose_name="重复检索词",
            ),
        ),
        migrations.AddField(
            model_name="versionterm",
            name="single",
            field=models.FloatField(blank=True, null=True, verbose_name="单次出现最大权重"),
        ),
        migrations.RunPython(drop_vector, restore_vector),
    ]
