from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0004_worker_heartbeat"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="execution_epoch",
            field=models.PositiveIntegerField(default=0, db_default=0),
        ),
    ]
