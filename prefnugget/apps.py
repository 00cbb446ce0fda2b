from django.apps import AppConfig


class PrefnuggetConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "prefnugget"
