"""Fill ``Chunk.version`` from each chunk's document, in batches of ``BATCH`` chunk ids,
printing progress when there are chunks (on a 220,000-chunk database: see
docs/retrieval.md "Index"). One transaction (the migration's); rerunnable: it sets
what its document says, whatever was there. Afterwards run ``VACUUM ANALYZE
knowledge_chunk`` on PostgreSQL (every chunk row was rewritten)."""

import sys
import time

from django.db import migrations

BATCH = 20_000
FILL = (
    "UPDATE knowledge_chunk SET version_id = (SELECT d.version_id FROM knowledge_document d"
    " WHERE d.id = knowledge_chunk.document_id) WHERE id >= %s AND id < %s"
)


def backfill(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT min(id), max(id), count(*) FROM knowledge_chunk")
        low, high, total = cursor.fetchone()
        if not total:
            return
        started, done = time.monotonic(), 0
        for first in range(low, high + 1, BATCH):
            cursor.execute(FILL, [first, first + BATCH])
            done += cursor.rowcount
            sys.stdout.write(
                f"\n  chunk versions: {done:,} of {total:,} ({time.monotonic() - started:.1f} s)"
            )
            sys.stdout.flush()
        sys.stdout.write("\n")


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0011_chunk_version")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
