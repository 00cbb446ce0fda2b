from django.apps import AppConfig


class ArgueConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "argue"
    protocol_family = "reports"  # its parts show in the campaigns that use this family (Campaign.families)
    verbose_name = "ARGUE-style report evaluation"
