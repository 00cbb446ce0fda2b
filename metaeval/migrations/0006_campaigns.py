"""Score tables, studies and kept comparisons belong to a campaign: existing rows to the first (id 1, made by
assessor 0026), and a table's or a study's name is unique within its campaign.

The database fills the new columns with 1; in the models' state their default is the campaign in effect
(assessor.models.scope), which a migration must not call (assessor 0026 says why).
"""

import assessor.models.scope
import django.db.models.deletion
from django.db import migrations, models

FIRST_CAMPAIGN = 1


def campaign_column(model_name: str) -> migrations.SeparateDatabaseAndState:
    def field(default):
        return models.ForeignKey(
            default=default, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="assessor.campaign"
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


class Migration(migrations.Migration):
    dependencies = [
        ("assessor", "0026_campaigns"),
        ("metaeval", "0005_kept_comparison_cells"),
    ]

    operations = [
        campaign_column("scoretable"),
        campaign_column("study"),
        campaign_column("keptcomparison"),
        migrations.AlterField(model_name="scoretable", name="name", field=models.SlugField(max_length=100)),
        migrations.AlterField(model_name="study", name="name", field=models.SlugField(max_length=100)),
        migrations.AddConstraint(
            model_name="scoretable",
            constraint=models.UniqueConstraint(fields=("campaign", "name"), name="one_score_table_name_per_campaign"),
        ),
        migrations.AddConstraint(
            model_name="study",
            constraint=models.UniqueConstraint(fields=("campaign", "name"), name="one_study_name_per_campaign"),
        ),
    ]
