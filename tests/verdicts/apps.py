from django.apps import AppConfig


class VerdictsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "tests.verdicts"
    label = "verdicts"
    verbose_name = "Answer verdicts (test app)"
