from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("assessor", "0008_label_source_required"),
    ]

    operations = [
        migrations.AddField(
            model_name="assessorwork",
            name="notes",
            field=models.TextField(blank=True),
        ),
    ]
