from django.apps import AppConfig


class ReportsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "reports"
    protocol_family = "reports"  # its parts show in the campaigns that use this family (Campaign.families)
