from django.db import migrations

from assessor.source_fill import sources_fill, works_fill


def fill(apps, schema_editor):
    sources_fill(apps, family="assignment", app_label="assignment", model_name="AssignmentLabel", name_field="assigner")
    works_fill(
        apps,
        family="assignment",
        app_label="assignment",
        model_name="AssignmentLabel",
        kinds={"assign_manual": "manual"},
        topic_path="answer__topic_id",
    )


class Migration(migrations.Migration):
    dependencies = [("assignment", "0002_label_source"), ("nuggets", "0004_nugget_set_source_fill")]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
