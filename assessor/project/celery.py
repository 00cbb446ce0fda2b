"""The Celery app every worker runs (`celery -A assessor worker`), and what any task sender needs of it."""

import os
import socket
import sys
import uuid
from typing import Any

from celery import Celery, Task
from celery.signals import task_postrun, task_prerun
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assessor.project.settings")
app = Celery("assessor")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Celery's Django fixup closes a task's database connections before and after every task unless
# CELERY_DB_REUSE_MAX says after how many: a worker opened a connection for every job item, and
# PostgreSQL started a server process for each (milliseconds of CPU an item on both sides, at tens
# of items a second). Its closing is put off for good here; `connections_tidied` closes them as
# Django does between requests instead.
app.conf.update(CELERY_DB_REUSE_MAX=sys.maxsize)


@task_prerun.connect
@task_postrun.connect
def connections_tidied(sender: Task | None = None, **_kwargs: Any) -> None:
    """Close this thread's connections that are older than CONN_MAX_AGE (on SQLite 0: every task's) or unusable
    after an error, as Django does around a request. Not for a task run eagerly inside the caller's transaction."""
    if sender is not None and getattr(sender.request, "is_eager", False):
        return
    close_old_connections()


def celery_task(name: str) -> Task:
    """A registered task by name: senders need not import the module that defines it."""
    return app.tasks[name]


def worker_name() -> str:
    """Who claims a row (a job item, an upload): the host, the process, and a nonce for a restarted one."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
