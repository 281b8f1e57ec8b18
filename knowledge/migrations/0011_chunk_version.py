"""Each chunk's version, a copy of its document's (``Chunk.version``); filled by 0012,
indexed by 0013.

PostgreSQL: ``btree_gin`` (for the version as a GIN key beside the stored vector, 0013);
the GIN index on the vector alone is dropped now, so the backfill (0012) does not
maintain it for every row it rewrites. From here to 0013 the chunks are not indexed:
run 0011–0013 together (``manage.py migrate knowledge``), with ingest stopped.
"""

import django.db.models.deletion
from django.contrib.postgres.operations import BtreeGinExtension
from django.db import migrations, models

OLD_INDEX = "knowledge_chunk_search_vector_gin"


def drop_vector_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {OLD_INDEX}")


def create_vector_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {OLD_INDEX} ON knowledge_chunk"
            " USING gin (search_vector) WITH (fastupdate = off)"
        )


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0010_search_index_without_pending_list")]

    operations = [
        BtreeGinExtension(),
        migrations.AddField(
            model_name="chunk",
            name="version",
            field=models.ForeignKey(
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="knowledge.knowledgeversion",
                verbose_name="版本",
            ),
        ),
        migrations.RunPython(drop_vector_index, create_vector_index),
    ]
