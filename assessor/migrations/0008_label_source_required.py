import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("assessor", "0007_label_source_fill")]

    operations = [
        migrations.AlterField(
            model_name="qrelsource",
            name="source",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="assessor.labelsource"
            ),
        ),
    ]
