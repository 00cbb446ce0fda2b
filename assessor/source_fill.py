"""Data migrations: a label source for every name already in use, and labels pointed at it.

Used by the migrations that introduced label sources (they import it, so it
must keep working on the historical models they pass in).
"""

from typing import Any


def sources_fill(apps: Any, *, family: str, app_label: str, model_name: str, name_field: str) -> None:
    """Make the source of each name of a label table, its kind read from the rows' provenance."""
    LabelSource = apps.get_model("assessor", "LabelSource")
    Model = apps.get_model(app_label, model_name)
    names = Model.objects.order_by().values_list(name_field, flat=True).distinct()
    for name in sorted(set(names)):
        rows = Model.objects.filter(**{name_field: name})
        person = rows.filter(created_by__isnull=False).order_by("created_at").first()
        machine = rows.filter(job__isnull=False).order_by("created_at").first()
        file = rows.filter(imported_from__isnull=False).order_by("created_at").first()
        if person is not None:
            fields = {"kind": "person", "created_by_id": person.created_by_id}
        elif machine is not None:
            job = machine.job
            fields = {"kind": "llm", "job": job, "model": job.model, "prompt_versions": job.prompt_versions}
        else:
            fields = {"kind": "file", "imported_from_id": file.imported_from_id if file else None}
        source, _ = LabelSource.objects.get_or_create(family=family, name=name, defaults=fields)
        rows.update(source=source)


def works_fill(apps: Any, *, family: str, app_label: str, model_name: str, kinds: dict[str, str], topic_path: str) -> None:
    """Point each person's label at the work it was made in, and the work at its source.

    kinds: the work kind -> the name its labels were stored under ("" : the work's own name field).
    """
    AssessorWork = apps.get_model("assessor", "AssessorWork")
    LabelSource = apps.get_model("assessor", "LabelSource")
    Model = apps.get_model(app_label, model_name)
    name_field = "assigner" if model_name == "AssignmentLabel" else "method"
    for work in AssessorWork.objects.filter(kind__in=list(kinds)):
        name = kinds[work.kind] or work.nugget_set_name
        source, _ = LabelSource.objects.get_or_create(
            family=family, name=name, defaults={"kind": "person", "created_by_id": work.created_by_id}
        )
        if source.kind != "person":
            continue  # the name is a file's or an LLM's: the work writes nothing there
        Model.objects.filter(
            **{name_field: name, "created_by_id": work.assessor_id, topic_path: work.topic_id}
        ).update(work=work)
        AssessorWork.objects.filter(pk=work.pk).update(source=source)
