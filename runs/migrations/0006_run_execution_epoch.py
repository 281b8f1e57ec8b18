from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0005_answer_stream"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="execution_epoch",
            field=models.PositiveIntegerField(default=0, db_default=0),
        ),
    ]
