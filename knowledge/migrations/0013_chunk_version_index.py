"""``Chunk.version`` required, bound to its document's, and the key of the chunks' GIN
index beside the stored vector.

On PostgreSQL ``(document_id, version_id)`` is a foreign key to the document's
``(id, version_id)`` (unique: ``document_unique_id_version``): no chunk is stored with
another version than its document's, however it is written, and a document moved to
another version (a DRAFT's) takes its chunks' copies along. The GIN index on
``(version_id, search_vector)`` (``btree_gin``, 0011; the same name as before) answers
``version_id = ANY(…) AND search_vector @@ …`` in one index scan (knowledge.candidates);
no pending list, as 0010 explains.
"""

import django.db.models.deletion
from django.db import migrations, models

INDEX = "knowledge_chunk_search_vector_gin"
FORWARD = (
    "ALTER TABLE knowledge_chunk ADD CONSTRAINT chunk_version_is_its_documents"
    " FOREIGN KEY (document_id, version_id) REFERENCES knowledge_document (id, version_id)"
    " ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED",
    f"CREATE INDEX IF NOT EXISTS {INDEX} ON knowledge_chunk"
    " USING gin (version_id, search_vector) WITH (fastupdate = off)",
)
BACKWARD = (
    f"DROP INDEX IF EXISTS {INDEX}",
    "ALTER TABLE knowledge_chunk DROP CONSTRAINT IF EXISTS chunk_version_is_its_documents",
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
    dependencies = [("knowledge", "0012_chunk_version_backfill")]

    operations = [
        migrations.AlterField(
            model_name="chunk",
            name="version",
            field=models.ForeignKey(
                db_index=False,
                editable=False,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="knowledge.knowledgeversion",
                verbose_name="版本",
            ),
        ),
        migrations.AddConstraint(
            model_name="document",
            constraint=models.UniqueConstraint(
                fields=("id", "version"), name="document_unique_id_version"
            ),
        ),
        migrations.RunPython(forward, backward),
    ]
