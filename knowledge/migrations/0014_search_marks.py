"""Each chunk's marks (``Chunk.search_marks``: the tokens it holds more than once,
``knowledge.text.search_marks``), filled by 0015; each term's single impact
(``VersionTerm.single``: its most in a chunk holding it once), stored at publish from now
on and by ``manage.py index_knowledge`` for the versions published before. Together
they bound a candidate's score without counting its tokens (``ranking.Bm25.reaches``).

PostgreSQL: the chunks' GIN index is dropped now, so the backfill (0015) does not
maintain it for every row it rewrites; 0016 builds it again. From here to 0016 the
chunks are not indexed (searches stay correct but read every chunk of their versions):
run 0014–0016 together (``manage.py migrate knowledge``), with ingest stopped.
"""

from django.db import migrations, models

INDEX = "knowledge_chunk_search_vector_gin"
CREATE = (
    f"CREATE INDEX IF NOT EXISTS {INDEX} ON knowledge_chunk"
    " USING gin (version_id, search_vector) WITH (fastupdate = off)"
)


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


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
        migrations.RunPython(drop_index, create_index),
    ]
