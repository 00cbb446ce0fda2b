from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AssessorConfig(AppConfig):
    name = "assessor"
    verbose_name = "Collection"

    def ready(self) -> None:
        from assessor.roles import roles_ensure

        # Every app's post_migrate, not only ours: the groups need the
        # permissions of apps that migrate after this one.
        post_migrate.connect(roles_ensure, dispatch_uid="assessor.roles_ensure")
