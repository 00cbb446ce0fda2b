from django.db import migrations


def qrels_sources_fill(apps, schema_editor):
    LabelSource = apps.get_model("assessor", "LabelSource")
    QrelSource = apps.get_model("assessor", "QrelSource")
    for qrel_source in QrelSource.objects.filter(source__isnull=True):
        job = qrel_source.job
        if job is not None:
            fields = {"kind": "llm", "job": job, "model": job.model, "prompt_versions": job.prompt_versions}
        else:
            fields = {"kind": "file", "imported_from_id": qrel_source.imported_from_id}
        source, _ = LabelSource.objects.get_or_create(family="qrels", name=qrel_source.name, defaults=fields)
        QrelSource.objects.filter(pk=qrel_source.pk).update(source=source)


class Migration(migrations.Migration):
    dependencies = [("assessor", "0006_label_source")]

    operations = [migrations.RunPython(qrels_sources_fill, migrations.RunPython.noop)]
