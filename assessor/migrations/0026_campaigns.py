"""Campaigns. Everything a database held before them moves into its first campaign, "main" (key suffix
empty, so every topic keeps its key), and every person with a role becomes its member.

The new `campaign` columns are filled with that campaign's id (1) in the database; in the models'
state their default is the campaign in effect (assessor.models.scope), which a migration must not
call: it reads the Campaign model as the code has it now, not as this migration left it.
"""

import assessor.models.scope
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.core.management.color import no_style
from django.db import migrations, models


FIRST_CAMPAIGN = 1


def campaign_column(model_name: str, related_name: str) -> migrations.SeparateDatabaseAndState:
    def field(default):
        return models.ForeignKey(
            default=default,
            on_delete=django.db.models.deletion.PROTECT,
            related_name=related_name,
            to="assessor.campaign",
        )

    return migrations.SeparateDatabaseAndState(
        database_operations=[
            migrations.AddField(
                model_name=model_name, name="campaign", field=field(FIRST_CAMPAIGN), preserve_default=False
            )
        ],
        state_operations=[
            migrations.AddField(
                model_name=model_name, name="campaign", field=field(assessor.models.scope.campaign_default)
            )
        ],
    )


def first_campaign_create(apps, schema_editor) -> None:
    Campaign = apps.get_model("assessor", "Campaign")
    Campaign.objects.using(schema_editor.connection.alias).create(
        pk=FIRST_CAMPAIGN,
        slug="main",
        title="Main campaign",
        key_suffix="",
        answer_word_limit=400,
        answer_reference_cap=20,
    )
    # An id given by hand leaves PostgreSQL's sequence behind: the next campaign would be given 1 again.
    with schema_editor.connection.cursor() as cursor:
        for sql in schema_editor.connection.ops.sequence_reset_sql(no_style(), [Campaign]):
            cursor.execute(sql)


def members_add(apps, schema_editor) -> None:
    """Every person with a role (an assessor, an organizer, an admin) is a member of the first campaign."""
    db = schema_editor.connection.alias
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    CampaignMember = apps.get_model("assessor", "CampaignMember")
    people = (
        User.objects.using(db).filter(groups__name__in=["assessor", "organizer", "admin"]).values_list("pk", flat=True)
    )
    CampaignMember.objects.using(db).bulk_create(
        CampaignMember(campaign_id=FIRST_CAMPAIGN, user_id=pk) for pk in sorted(set(people))
    )


class Migration(migrations.Migration):
    dependencies = [
        ("assessor", "0025_llm_batch_mode"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Campaign",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("slug", models.SlugField(unique=True)),
                ("title", models.CharField(max_length=200)),
                ("description", models.TextField(blank=True)),
                ("families", models.JSONField(blank=True, default=list)),
                ("answer_word_limit", models.PositiveIntegerField(blank=True, null=True)),
                ("answer_reference_cap", models.PositiveIntegerField(blank=True, null=True)),
                ("guidelines", models.TextField(blank=True)),
                ("default_endpoint", models.CharField(blank=True, max_length=50)),
                ("key_suffix", models.CharField(blank=True, editable=False, max_length=60, unique=True)),
                ("closed_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "ordering": ["created_at", "pk"],
            },
        ),
        migrations.RunPython(first_campaign_create, migrations.RunPython.noop),
        migrations.CreateModel(
            name="CampaignMember",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("added_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "ordering": ["campaign_id", "user_id"],
            },
        ),
        migrations.RemoveConstraint(
            model_name="job",
            name="one_job_per_output",
        ),
        migrations.RemoveConstraint(
            model_name="labelsource",
            name="one_source_per_family_and_name",
        ),
        migrations.AlterField(
            model_name="qrelsource",
            name="name",
            field=models.SlugField(max_length=100),
        ),
        migrations.AlterField(
            model_name="run",
            name="run_id",
            field=models.CharField(max_length=200),
        ),
        migrations.AlterField(
            model_name="runalias",
            name="alias",
            field=models.CharField(max_length=200),
        ),
        campaign_column("importbatch", "+"),
        campaign_column("job", "+"),
        campaign_column("labelsource", "+"),
        campaign_column("qrelsource", "+"),
        campaign_column("run", "runs"),
        campaign_column("runalias", "+"),
        campaign_column("topic", "topics"),
        campaign_column("upload", "+"),
        migrations.AddConstraint(
            model_name="job",
            constraint=models.UniqueConstraint(
                condition=models.Q(("owns_output", True), models.Q(("status", "cancelled"), _negated=True)),
                fields=("campaign", "output_family", "output_name"),
                name="one_job_per_output",
            ),
        ),
        migrations.AddConstraint(
            model_name="labelsource",
            constraint=models.UniqueConstraint(
                fields=("campaign", "family", "name"), name="one_source_per_family_and_name"
            ),
        ),
        migrations.AddConstraint(
            model_name="qrelsource",
            constraint=models.UniqueConstraint(fields=("campaign", "name"), name="one_qrel_source_name_per_campaign"),
        ),
        migrations.AddConstraint(
            model_name="run",
            constraint=models.UniqueConstraint(fields=("campaign", "run_id"), name="one_run_id_per_campaign"),
        ),
        migrations.AddConstraint(
            model_name="runalias",
            constraint=models.UniqueConstraint(fields=("campaign", "alias"), name="one_alias_per_campaign"),
        ),
        migrations.AddField(
            model_name="campaignmember",
            name="campaign",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="members", to="assessor.campaign"
            ),
        ),
        migrations.AddField(
            model_name="campaignmember",
            name="user",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="campaign_memberships",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="campaignmember",
            constraint=models.UniqueConstraint(fields=("campaign", "user"), name="one_membership_per_campaign"),
        ),
        migrations.RunPython(members_add, migrations.RunPython.noop),
    ]
