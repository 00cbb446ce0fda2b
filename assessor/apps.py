from importlib import import_module

from django.apps import AppConfig, apps
from django.core.checks import Tags, register
from django.db.models.signals import post_migrate
from django.utils.module_loading import module_has_submodule


class AssessorConfig(AppConfig):
    name = "assessor"
    verbose_name = "Collection"
    protocol_family = ""  # the foundation's parts show in every campaign, whatever its families

    def ready(self) -> None:
        from assessor.campaigns import tasks as campaign_tasks  # noqa: F401  (a task runs in its sender's campaign)
        from assessor.collection import parts
        from assessor.collection import tasks as collection_tasks  # noqa: F401  (registers the upload task)
        from assessor.jobs import tasks  # noqa: F401  (registers the job engine's Celery tasks)
        from assessor.project.checks import allowed_hosts_check
        from assessor.registry import NavLink, register_nav_link
        from assessor.work.roles import roles_ensure

        # Every app's post_migrate, not only ours: the groups need the
        # permissions of apps that migrate after this one.
        post_migrate.connect(roles_ensure, dispatch_uid="assessor.roles_ensure")
        register(allowed_hosts_check, Tags.security, deploy=True)
        parts.register()
        for link in (
            NavLink("Topics", "queries, relevant segments, nuggets and labels", "collection:topics", 10),
            NavLink("Runs", "answers and their per-topic scores", "collection:runs", 20),
            NavLink("Leaderboards", "runs ranked under each condition", "collection:leaderboards", 30),
            NavLink("Upload", "import topics, runs, qrels, nuggets, labels", "collection:upload", 40),
            NavLink("Jobs", "LLM jobs: progress, cost, failures", "jobs:list", 60),
            NavLink("Accounts", "add assessors, reset passwords, deactivate accounts", "accounts:list", 75),
            NavLink("Admin", "every record, with its provenance", "admin:index", 80),
        ):
            register_nav_link(link)
        apps_parts_register()


def apps_parts_register() -> None:
    """Every installed app's `parts.register()`, found rather than named: the foundation knows no app.

    In INSTALLED_APPS order (the foundation's own parts first), the order in which the
    registry lists what the apps declared (the jobs page's launch buttons, the queue).
    """
    from assessor.registry import app_registering

    for config in apps.get_app_configs():
        if config.name != AssessorConfig.name and module_has_submodule(config.module, "parts"):
            with app_registering(app_protocol_family(config)):
                import_module(f"{config.name}.parts").register()


def app_protocol_family(config: AppConfig) -> str:
    """The protocol family an app's parts belong to (its `protocol_family`; none: every family). The families are
    the ones the apps declare: the foundation names none (assessor.campaigns.services.protocol_families)."""
    return getattr(config, "protocol_family", "")
