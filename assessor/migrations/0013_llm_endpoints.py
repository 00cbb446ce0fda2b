import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def llm_sources_of_the_default_endpoint(apps, schema_editor):
    # Every job before named endpoints used the LLM_* variables, which are the endpoint "default".
    LabelSource = apps.get_model("assessor", "LabelSource")
    LabelSource.objects.filter(kind="llm").update(endpoint_name="default")


class Migration(migrations.Migration):
    dependencies = [
        ("assessor", "0012_independent_work_and_replicates"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="LLMEndpoint",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.SlugField(unique=True)),
                ("base_url", models.URLField(blank=True, help_text="Empty: api.openai.com.", max_length=500)),
                (
                    "api_key_env",
                    models.CharField(
                        blank=True,
                        help_text="The NAME of the environment variable holding the key (not the key).",
                        max_length=100,
                    ),
                ),
                ("model", models.CharField(max_length=200)),
                ("api_version", models.CharField(blank=True, help_text="Azure OpenAI only.", max_length=50)),
                ("concurrency", models.PositiveIntegerField(default=8)),
                ("price_input", models.FloatField(default=0.0, help_text="US dollars per million input tokens.")),
                ("price_output", models.FloatField(default=0.0, help_text="US dollars per million output tokens.")),
                ("temperature", models.FloatField(default=0.0)),
                ("timeout", models.FloatField(default=60.0, help_text="Seconds per call.")),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.AddField(
            model_name="job",
            name="endpoint_name",
            field=models.CharField(default="default", max_length=50),
        ),
        migrations.AddField(
            model_name="labelsource",
            name="endpoint_name",
            field=models.CharField(blank=True, max_length=50),
        ),
        migrations.RunPython(llm_sources_of_the_default_endpoint, migrations.RunPython.noop),
        # The slots hold only leases of calls in flight: a new table, one pool of slots per endpoint.
        migrations.DeleteModel(name="LLMSlot"),
        migrations.CreateModel(
            name="LLMSlot",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("pool", models.CharField(max_length=16)),
                ("number", models.PositiveIntegerField()),
                ("holder", models.CharField(blank=True, max_length=100)),
                ("lease_until", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "ordering": ["pool", "number"],
                "constraints": [models.UniqueConstraint(fields=("pool", "number"), name="llm_slot_once_per_pool")],
            },
        ),
    ]
