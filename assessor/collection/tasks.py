"""Celery tasks of the collection: thin, taking ids, safe to run twice."""

from celery import shared_task

from assessor.collection.uploads import UPLOAD_TASK, upload_run


@shared_task(name=UPLOAD_TASK)
def upload_import(upload_id: int) -> str:
    # A duplicate delivery finds the upload claimed or finished and skips it.
    return upload_run(upload_id)
