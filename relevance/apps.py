from django.apps import AppConfig


class RelevanceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "relevance"
