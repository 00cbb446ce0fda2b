"""Costs in pico-dollars (exact integers) instead of micro-dollar decimals rounded per call."""

from decimal import Decimal

from django.db import migrations, models

PICODOLLARS = 10**12


def to_picodollars(apps, schema_editor) -> None:
    for name in ("Job", "LLMCall"):
        model = apps.get_model("assessor", name)
        changed = []
        for row in model.objects.exclude(cost=0).only("pk", "cost").iterator():
            row.cost_picodollars = int(Decimal(row.cost) * PICODOLLARS)
            changed.append(row)
        model.objects.bulk_update(changed, ["cost_picodollars"], batch_size=500)


def to_dollars(apps, schema_editor) -> None:
    for name in ("Job", "LLMCall"):
        model = apps.get_model("assessor", name)
        changed = []
        for row in model.objects.exclude(cost_picodollars=0).only("pk", "cost_picodollars").iterator():
            row.cost = (Decimal(row.cost_picodollars) / PICODOLLARS).quantize(Decimal("0.000001"))
            changed.append(row)
        model.objects.bulk_update(changed, ["cost"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("assessor", "0020_run_alias_set_aside")]

    operations = [
        migrations.AddField("job", "cost_picodollars", models.PositiveBigIntegerField(default=0)),
        migrations.AddField("llmcall", "cost_picodollars", models.PositiveBigIntegerField(default=0)),
        migrations.RunPython(to_picodollars, to_dollars),
        migrations.RemoveField("job", "cost"),
        migrations.RemoveField("llmcall", "cost"),
    ]
