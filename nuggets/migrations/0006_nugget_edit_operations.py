"""The nugget edits' operation ids move to the judging core's record of operations (WorkOperation).

A retried edit is recognised there from now on (nuggets.editing), as every
other save of an assessor's page; the ids the edits carried are copied over
first, so that a retry of an edit made before the upgrade (still in a page's
queue) is never applied twice: it is refused as an id already used, and the
page reloads the list that holds it. Then the edit log loses its own column.
"""

from django.db import migrations

# As stored when this migration was written (nuggets.kinds).
NUGGET_WORK_KINDS = ("nuggets_manual", "nuggets_auto_edit")


def operations_copy(apps, schema_editor):
    NuggetEdit = apps.get_model("nuggets", "NuggetEdit")
    AssessorWork = apps.get_model("assessor", "AssessorWork")
    WorkOperation = apps.get_model("assessor", "WorkOperation")
    works = {
        (topic_id, name): pk
        for pk, topic_id, name in AssessorWork.objects.filter(kind__in=NUGGET_WORK_KINDS, independent=False).values_list(
            "pk", "topic_id", "nugget_set_name"
        )
    }
    rows = []
    edits = NuggetEdit.objects.exclude(op_id="").values_list(
        "pk", "op_id", "operation", "set_version", "nugget_set__topic_id", "nugget_set__name"
    )
    for pk, op_id, operation, set_version, topic_id, name in edits.iterator():
        work_id = works.get((topic_id, name))
        if work_id is not None:
            request = ["nuggets", operation, set_version - 1]
            rows.append(WorkOperation(work_id=work_id, op_id=op_id, answer={"edit": pk, "request": request}))
    WorkOperation.objects.bulk_create(rows, batch_size=1000, ignore_conflicts=True)


class Migration(migrations.Migration):
    dependencies = [
        ("nuggets", "0005_nugget_set_source_required"),
        ("assessor", "0018_kinds_from_the_apps"),
    ]

    operations = [
        migrations.RunPython(operations_copy, migrations.RunPython.noop),
        migrations.RemoveConstraint(model_name="nuggetedit", name="nugget_edit_op_once"),
        migrations.RemoveField(model_name="nuggetedit", name="op_id"),
    ]
