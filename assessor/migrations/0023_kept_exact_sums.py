from django.db import migrations

from assessor.scoring.exact import exact_sum, mean_of_sum, sum_kept


def sums_made_exact(apps, schema_editor):
    """Every kept run's sums made exact: the sum of its kept answers' fractions, again from its rows."""
    KeptRunScore = apps.get_model("assessor", "KeptRunScore")
    KeptAnswerScore = apps.get_model("assessor", "KeptAnswerScore")
    for row in KeptRunScore.objects.select_related("source").iterator():
        values = list(
            KeptAnswerScore.objects.filter(source_id=row.source_id, run_id=row.run_id).values_list("values", flat=True)
        )
        totals = {metric: exact_sum(one[metric] for one in values) for metric in row.source.metrics}
        row.exact_sums = {metric: sum_kept(total) for metric, total in totals.items()}
        row.sums = {metric: mean_of_sum(total, 1) for metric, total in totals.items()}
        row.save(update_fields=["exact_sums", "sums"])


class Migration(migrations.Migration):
    dependencies = [("assessor", "0022_one_job_per_output")]

    operations = [
        migrations.RenameField(model_name="keptrunscore", old_name="partials", new_name="exact_sums"),
        migrations.RunPython(sums_made_exact, migrations.RunPython.noop),
    ]
