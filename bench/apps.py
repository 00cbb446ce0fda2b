from django.apps import AppConfig


class BenchConfig(AppConfig):
    """Benchmarks and the local fake LLM server: run by `manage.py bench_*`, never by the product."""

    name = "bench"
    verbose_name = "Benchmarks"
