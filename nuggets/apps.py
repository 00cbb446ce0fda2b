from django.apps import AppConfig


class NuggetsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "nuggets"
    protocol_family = "rag"  # its parts show in the campaigns that use this family (Campaign.families)
