from django.apps import AppConfig


class GradesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "grades"
    protocol_family = "reports"  # its parts show in the campaigns that use this family (Campaign.families)
