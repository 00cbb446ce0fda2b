"""One job owns an output, by a unique constraint; and the call log says which calls reached the endpoint.

Existing jobs learn where their output name lives from their kind (the label
family each kind's app claimed its source in when this was written; a kind
without one, such as Crucible's, is its own). A job that labelled stale nuggets
again (params "rerun") adds to its assigner's output and owns none. Where
launches at the same moment left two jobs owning one output, the first made
keeps it and the others stay as they are, owning none, so the constraint holds
without touching any result.
"""

from django.db import migrations, models
from django.db.models import Q

FAMILY_OF_KIND = {
    "auto_nuggets": "nuggets",
    "draft_nuggets": "nuggets",
    "prefnugget_bank": "nuggets",
    "query_bank": "nuggets",
    "auto_assign": "assignment",
    "auto_support": "support",
    "umbrela": "qrels",
    "preferences": "preferences",
    "argue": "argue",
    "question_grading": "question_grades",
}


def outputs_named(apps, schema_editor) -> None:
    Job = apps.get_model("assessor", "Job")
    owners: set[tuple[str, str]] = set()
    changed = []
    for job in Job.objects.only("pk", "kind", "output_name", "status", "params").order_by("pk").iterator():
        job.output_family = FAMILY_OF_KIND.get(job.kind, job.kind)
        rerun = isinstance(job.params, dict) and bool(job.params.get("rerun"))
        output = (job.output_family, job.output_name)
        job.owns_output = not rerun and (job.status == "cancelled" or output not in owners)
        if job.owns_output and job.status != "cancelled":
            owners.add(output)
        changed.append(job)
    Job.objects.bulk_update(changed, ["output_family", "owns_output"], batch_size=500)
    # A request that could not be sent is logged with the error of its type, and was never counted as a call.
    LLMCall = apps.get_model("assessor", "LLMCall")
    LLMCall.objects.filter(from_cache=False, error__startswith="APIConnectionError:").update(reached=False)


class Migration(migrations.Migration):
    dependencies = [("assessor", "0021_cost_in_picodollars")]

    operations = [
        migrations.AddField("job", "output_family", models.CharField(blank=True, max_length=50)),
        migrations.AddField("job", "owns_output", models.BooleanField(default=True)),
        migrations.AddField("llmcall", "reached", models.BooleanField(default=True)),
        migrations.RunPython(outputs_named, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="job",
            constraint=models.UniqueConstraint(
                condition=Q(owns_output=True) & ~Q(status="cancelled"),
                fields=("output_family", "output_name"),
                name="one_job_per_output",
            ),
        ),
    ]
