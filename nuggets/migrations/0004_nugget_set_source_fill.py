from django.db import migrations

from assessor.source_fill import sources_fill


def fill(apps, schema_editor):
    sources_fill(apps, family="nuggets", app_label="nuggets", model_name="NuggetSet", name_field="name")
    AssessorWork = apps.get_model("assessor", "AssessorWork")
    LabelSource = apps.get_model("assessor", "LabelSource")
    for work in AssessorWork.objects.filter(kind__in=["nuggets_manual", "nuggets_auto_edit"]):
        source, _ = LabelSource.objects.get_or_create(
            family="nuggets", name=work.nugget_set_name, defaults={"kind": "person", "created_by_id": work.created_by_id}
        )
        if source.kind == "person":
            AssessorWork.objects.filter(pk=work.pk).update(source=source)


class Migration(migrations.Migration):
    dependencies = [("nuggets", "0003_nugget_set_source"), ("assessor", "0007_label_source_fill")]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
