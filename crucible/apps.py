from django.apps import AppConfig


class CrucibleConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "crucible"
