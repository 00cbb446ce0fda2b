from django.apps import AppConfig


class NuggetsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "nuggets"
