"""Fill ``Chunk.search_marks`` from each chunk's ``search_text`` (``knowledge.text.
search_marks``, what ingest writes), in batches of ``BATCH`` chunk ids, printing
progress when there are chunks (docs/retrieval.md "Upgrading to the marks"). One
transaction (the migration's); rerunnable: it writes what the tokens say, whatever was
there. Afterwards run ``VACUUM ANALYZE knowledge_chunk`` on PostgreSQL."""

import sys
import time

from django.db import migrations

from knowledge.text import search_marks

BATCH = 20_000


def backfill(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT min(id), max(id), count(*) FROM knowledge_chunk")
        low, high, total = cursor.fetchone()
        if not total:
            return
        started, done = time.monotonic(), 0
        for first in range(low, high + 1, BATCH):
            cursor.execute(
                "SELECT id, search_text FROM knowledge_chunk WHERE id >= %s AND id < %s",
                [first, first + BATCH],
            )
            rows = cursor.fetchall()
            marks = [(pk, m) for pk, text in rows if (m := search_marks(text.split()))]
            if marks and connection.vendor == "postgresql":
                cursor.execute(
                    "UPDATE knowledge_chunk c SET search_marks = u.marks"
                    " FROM unnest(%s::bigint[], %s::text[]) AS u(id, marks) WHERE c.id = u.id",
                    [[pk for pk, _ in marks], [m for _, m in marks]],
                )
            elif marks:
                cursor.executemany(
                    "UPDATE knowledge_chunk SET search_marks = %s WHERE id = %s",
                    [(m, pk) for pk, m in marks],
                )
            done += len(rows)
            sys.stdout.write(
                f"\n  chunk marks: {done:,} of {total:,} ({time.monotonic() - started:.1f} s)"
            )
            sys.stdout.flush()
        sys.stdout.write("\n")


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0014_search_marks")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
