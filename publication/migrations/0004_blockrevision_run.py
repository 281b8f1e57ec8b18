"""The block's run on each revision, for the exact-duplicate check's index
(``blockrevision_run_digest``), filled from the blocks. Additive: the column stays
nullable so that the previous release's processes, which do not write it, keep
committing while a rolling upgrade runs (docs/deployment.md)."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def fill_runs(apps, schema_editor):
    AnswerBlock = apps.get_model("publication", "AnswerBlock")
    BlockRevision = apps.get_model("publication", "BlockRevision")
    BlockRevision.objects.update(
        run_id=Subquery(AnswerBlock.objects.filter(pk=OuterRef("block_id")).values("run_id")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [
        ("publication", "0003_chinese_verbose_names"),
        ("runs", "0001_runs_events_journal"),
    ]

    operations = [
        migrations.AddField(
            model_name="blockrevision",
            name="run",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="runs.run",
            ),
        ),
        migrations.RunPython(fill_runs, migrations.RunPython.noop, elidable=True),
        migrations.RemoveIndex(model_name="blockrevision", name="blockrevision_digest"),
        migrations.AddIndex(
            model_name="blockrevision",
            index=models.Index(fields=["run", "body_digest"], name="blockrevision_run_digest"),
        ),
    ]
