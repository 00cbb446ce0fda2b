from django.apps import AppConfig


class RelevanceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "relevance"
    protocol_family = "rag"  # its parts show in the campaigns that use this family (Campaign.families)
