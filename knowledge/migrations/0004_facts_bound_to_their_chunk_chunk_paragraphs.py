"""Fact.chunk: a fact is bound to the chunk that states it; Chunk.paragraph: where it begins.

Existing facts are anchored with the rule ingestion now applies
(``knowledge.figures.anchor_value``); one that no chunk of its document
states keeps NULL and is never handed out as a numeric handle.
"""

import django.db.models.deletion
from django.db import migrations, models


def anchor_existing_facts(apps, schema_editor):
    from knowledge.figures import anchor_value

    Fact = apps.get_model("knowledge", "Fact")
    Chunk = apps.get_model("knowledge", "Chunk")
    chunks_by_document: dict[int, list] = {}
    for fact in Fact.objects.filter(chunk__isnull=True).order_by("document_id", "pk"):
        if fact.document_id not in chunks_by_document:
            chunks_by_document[fact.document_id] = list(
                Chunk.objects.filter(document_id=fact.document_id).order_by("ordinal")
            )
        chunks = chunks_by_document[fact.document_id]
        anchor = anchor_value(
            [(c.page, c.text) for c in chunks],
            fact.value,
            fact.unit,
            label=fact.label or fact.key,
        )
        if anchor is not None:
            Fact.objects.filter(pk=fact.pk).update(chunk_id=chunks[anchor.index].pk)


def number_paragraphs(apps, schema_editor):
    """Chunks of a page are whole paragraphs in order: each begins after the lines before it."""
    Chunk = apps.get_model("knowledge", "Chunk")
    line = {}
    for chunk in Chunk.objects.order_by("document_id", "page", "ordinal"):
        key = (chunk.document_id, chunk.page)
        paragraph = line.get(key, 1)
        if chunk.paragraph != paragraph:
            Chunk.objects.filter(pk=chunk.pk).update(paragraph=paragraph)
        line[key] = paragraph + sum(1 for text in chunk.text.split("\n") if text.strip())


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0003_fact_label"),
    ]

    operations = [
        migrations.AddField(
            model_name="fact",
            name="chunk",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="facts",
                to="knowledge.chunk",
            ),
        ),
        migrations.AddField(
            model_name="chunk",
            name="paragraph",
            field=models.PositiveIntegerField(
                default=1,
                help_text="1-based paragraph (non-blank line) of its page where it begins",
            ),
        ),
        migrations.RunPython(anchor_existing_facts, migrations.RunPython.noop),
        migrations.RunPython(number_paragraphs, migrations.RunPython.noop),
    ]
