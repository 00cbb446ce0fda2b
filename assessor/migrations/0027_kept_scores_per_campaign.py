"""Kept scores per campaign: a condition's name ("auto_edit/manual") names one kept source in each campaign.

Every kept source there is belongs to the first campaign (the two migrations come together: no second
campaign kept scores before this one). As in 0026, the column is filled with that campaign's id in the
database, and the models' default, the campaign in effect, is the state's only.
"""

import django.db.models.deletion
from django.db import migrations, models

import assessor.models.scope

FIRST_CAMPAIGN = 1


def _campaign(default) -> models.ForeignKey:
    return models.ForeignKey(
        default=default, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="assessor.campaign"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("assessor", "0026_campaigns"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="keptsource",
            name="kept_source_once",
        ),
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.AddField(
                    model_name="keptsource", name="campaign", field=_campaign(FIRST_CAMPAIGN), preserve_default=False
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="keptsource", name="campaign", field=_campaign(assessor.models.scope.campaign_default)
                )
            ],
        ),
        migrations.AddConstraint(
            model_name="keptsource",
            constraint=models.UniqueConstraint(fields=("campaign", "family", "name"), name="kept_source_once"),
        ),
    ]
