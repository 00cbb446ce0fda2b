from django.apps import AppConfig


class ArgueConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "argue"
    verbose_name = "ARGUE-style report evaluation"

    def ready(self) -> None:
        from argue import parts

        parts.register()
