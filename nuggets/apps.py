from django.apps import AppConfig


class NuggetsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "nuggets"
    protocol_family = "rag"  # its parts show in the campaigns of this family (Campaign.Family)
