from django.db import migrations

from assessor.source_fill import sources_fill, works_fill


def fill(apps, schema_editor):
    sources_fill(apps, family="support", app_label="support", model_name="SupportLabel", name_field="method")
    works_fill(
        apps,
        family="support",
        app_label="support",
        model_name="SupportLabel",
        kinds={"support_scratch": "scratch", "support_postedit": "postedit"},
        topic_path="citation__sentence__answer__topic_id",
    )


class Migration(migrations.Migration):
    dependencies = [("support", "0002_label_source"), ("assessor", "0007_label_source_fill")]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
