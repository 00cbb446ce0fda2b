from django.apps import AppConfig


class MetaevalConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metaeval"

    def ready(self) -> None:
        from metaeval import tasks

        del tasks  # imported to register the comparisons' Celery tasks
