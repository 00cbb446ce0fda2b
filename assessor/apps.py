from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AssessorConfig(AppConfig):
    name = "assessor"
    verbose_name = "Collection"

    def ready(self) -> None:
        from assessor.roles import roles_ensure

        post_migrate.connect(roles_ensure, sender=self, dispatch_uid="assessor.roles_ensure")
