from django.apps import AppConfig


class PrefnuggetConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "prefnugget"
    protocol_family = "reports"  # its parts show in the campaigns of this family (Campaign.Family)
