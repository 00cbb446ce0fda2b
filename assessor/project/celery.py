"""The Celery app every worker runs (`celery -A assessor worker`), and what any task sender needs of it."""

import os
import socket
import uuid

from celery import Celery, Task

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assessor.project.settings")
app = Celery("assessor")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def celery_task(name: str) -> Task:
    """A registered task by name: senders need not import the module that defines it."""
    return app.tasks[name]


def worker_name() -> str:
    """Who claims a row (a job item, an upload): the host, the process, and a nonce for a restarted one."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
