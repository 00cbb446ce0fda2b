from django.apps import AppConfig


class ArgueConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "argue"
    verbose_name = "ARGUE-style report evaluation"
