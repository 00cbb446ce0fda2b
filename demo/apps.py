from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo dataset and accounts (`manage.py load_demo`): real TREC 2024 data through every app's importers."""

    name = "demo"
    verbose_name = "Demo data"
