import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("nuggets", "0004_nugget_set_source_fill")]

    operations = [
        migrations.AlterField(
            model_name="nuggetset",
            name="source",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="assessor.labelsource"
            ),
        ),
    ]
