from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("assessor", "0010_audit_entry"),
    ]

    operations = [
        migrations.AddField(
            model_name="assessorwork",
            name="notes",
            field=models.TextField(blank=True),
        ),
    ]
