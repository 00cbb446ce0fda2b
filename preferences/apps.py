from django.apps import AppConfig


class PreferencesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "preferences"
    protocol_family = "reports"  # its parts show in the campaigns that use this family (Campaign.families)
