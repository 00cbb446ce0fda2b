from django.apps import AppConfig


class MetaevalConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metaeval"
    # Every family: its truth leaderboards and disagreement studies read the reports family's scores too (ARGUE).
    protocol_family = ""

    def ready(self) -> None:
        from metaeval import tasks

        del tasks  # imported to register the comparisons' Celery tasks
