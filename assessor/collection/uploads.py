"""Uploads are imported by a worker: the file is kept on disk, its import queued, watched and recorded.

The web request only keeps the file (Django's upload handlers stream a large one
to disk; it is then moved under UPLOAD_DIR) and records an `Upload` row; a Celery
task runs the kind's importer on it (`upload_run`): the same service the
`import_*` commands call, all or nothing, its errors named by file, line and
field. While it runs, how far it got is written every REPORT_EVERY_LINES lines
to a small file beside the upload, outside the import's transaction, so that
the upload's page reads it at once; the final numbers and the result or the
failure go to the row. The file is deleted after a successful import and kept
after a failure, for a retry.
"""

import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.move import file_move_safe
from django.core.files.uploadedfile import TemporaryUploadedFile, UploadedFile
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from assessor.importing.base import ImportFailure, ImportResult, statistics_refresh
from assessor.importing.progress import ImportProgress, progress_watched
from assessor.models import Upload
from assessor.models.scope import campaign_scope
from assessor.project.celery import celery_task, worker_name
from assessor.project.security import owner_only_folder
from assessor.registry import registry

logger = logging.getLogger(__name__)

# The Celery task (assessor.collection.tasks) that imports an upload, found by name.
UPLOAD_TASK = "assessor.upload_import"
RECENT_UPLOADS = 20


# --- where the file and its progress live ------------------------------------------------


def upload_folder(upload: Upload) -> Path:
    return Path(settings.UPLOAD_DIR) / str(upload.pk)


def upload_path(upload: Upload) -> Path:
    # Under its uploaded name: the importers name the file in their errors and batches.
    return upload_folder(upload) / upload.file_name


def progress_path(upload: Upload) -> Path:
    return Path(settings.UPLOAD_DIR) / f"{upload.pk}.progress.json"


def _without_folder(text: str, upload: Upload) -> str:
    # The server's folder means nothing to the person who uploaded the file.
    return text.replace(str(upload_folder(upload)) + os.sep, "")


# --- the web request's part -------------------------------------------------------------


def upload_store(*, uploaded: UploadedFile, kind: str, options: dict[str, Any], user: User | None) -> Upload:
    """Record the upload and keep its file for the worker; nothing is imported yet."""
    name = Path(uploaded.name or "").name or "upload"
    with transaction.atomic():
        upload = Upload.objects.create(
            kind=kind, options=options, file_name=name, size=uploaded.size or 0, created_by=user
        )
        folder = owner_only_folder(upload_folder(upload))
        try:
            _file_keep(uploaded, folder / name)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    return upload


def _file_keep(uploaded: UploadedFile, destination: Path) -> None:
    if isinstance(uploaded, TemporaryUploadedFile):
        # Already on disk, in FILE_UPLOAD_TEMP_DIR (inside UPLOAD_DIR): a rename.
        file_move_safe(uploaded.temporary_file_path(), str(destination))
        return
    with destination.open("wb") as handle:
        for chunk in uploaded.chunks():
            handle.write(chunk)


def upload_queue(upload: Upload) -> None:
    """Send the upload to a worker, once the row is committed."""
    transaction.on_commit(lambda: celery_task(UPLOAD_TASK).apply_async(args=[upload.pk]))


class UploadRetryRefused(Exception):
    pass


def upload_stalled(upload: Upload) -> bool:
    """Whether a running upload has shown no sign of life (a progress report, or its start) for UPLOAD_STALL_MINUTES.

    Its worker was most likely stopped mid-import (an import stopped before its
    end wrote nothing), and the task's redelivery finds the upload claimed and skips it.
    """
    if upload.state != Upload.State.RUNNING or upload.started_at is None:
        return False
    try:
        last = max(upload.started_at.timestamp(), progress_path(upload).stat().st_mtime)
    except FileNotFoundError:
        last = upload.started_at.timestamp()
    return time.time() - last > settings.UPLOAD_STALL_MINUTES * 60


def upload_retry(upload_id: int) -> Upload:
    """Queue again a failed upload, or a stalled one, on the file that was kept; the caller queues it.

    Raises UploadRetryRefused.
    """
    upload = Upload.objects.get(pk=upload_id)
    refusal = f"upload {upload_id} is {upload.state}: only a failed or stalled upload is tried again"
    if not (upload.state == Upload.State.FAILED or upload_stalled(upload)):
        raise UploadRetryRefused(refusal)
    if not upload_path(upload).is_file():
        raise UploadRetryRefused(f"the file {upload.file_name} is no longer on the server: upload it again")
    # Conditional, so that two clicks queue it once; a stalled upload is taken from the worker that held it
    # (should that worker come back, its end finds the upload no longer its own and records nothing).
    again = Upload.objects.filter(pk=upload_id, state=upload.state, claimed_by=upload.claimed_by).update(
        state=Upload.State.QUEUED, error="", error_line=None, error_field="", finished_at=None
    )
    if not again:
        raise UploadRetryRefused(refusal)
    upload.refresh_from_db()
    return upload


# --- the worker's part ------------------------------------------------------------------


def upload_claim(upload_id: int, *, worker: str) -> bool:
    """Take a queued upload (a conditional update): of two deliveries of its task, one imports and the other skips."""
    return (
        Upload.objects.filter(pk=upload_id, state=Upload.State.QUEUED).update(
            state=Upload.State.RUNNING,
            claimed_by=worker,
            started_at=timezone.now(),
            attempts=F("attempts") + 1,
            lines_read=0,
            rows_written=0,
        )
        == 1
    )


def upload_run(upload_id: int) -> str:
    """Claim and import one upload: "done", "failed", or "skipped" (not queued: another delivery has it)."""
    worker = worker_name()
    if not upload_claim(upload_id, worker=worker):
        return "skipped"
    upload = Upload.objects.select_related("created_by", "campaign").get(pk=upload_id)
    # The file's rows go into the campaign it was uploaded to.
    with campaign_scope(upload.campaign):
        return _upload_import(upload, worker=worker)


def _upload_import(upload: Upload, *, worker: str) -> str:
    progress = ImportProgress(report=lambda seen: progress_write(upload, seen))
    try:
        importer = registry.importer(upload.kind)
        with progress_watched(progress):
            result = importer.function(
                path=upload_path(upload), user=upload.created_by, **importer.arguments(upload.options)
            )
    except ImportFailure as failure:
        _upload_fail(upload, worker, progress, error=failure.message, line=failure.line, field=failure.field)
        return "failed"
    except Exception as exc:  # a bug, or the database gone: the upload must not stay "running" for ever
        logger.exception("upload %s", upload.pk)
        _upload_fail(upload, worker, progress, error=f"the import stopped: {type(exc).__name__}: {exc}")
        return "failed"
    _upload_finish(upload, worker, progress, result)
    shutil.rmtree(upload_folder(upload), ignore_errors=True)
    statistics_refresh(result)
    return "done"


def _upload_fail(
    upload: Upload, worker: str, progress: ImportProgress, *, error: str, line: int | None = None, field: str = ""
) -> None:
    Upload.objects.filter(pk=upload.pk, state=Upload.State.RUNNING, claimed_by=worker).update(
        state=Upload.State.FAILED,
        finished_at=timezone.now(),
        lines_read=progress.lines,
        rows_written=progress.rows,
        error=_without_folder(error, upload),
        error_line=line,
        error_field=field,
    )
    progress_path(upload).unlink(missing_ok=True)


def _upload_finish(upload: Upload, worker: str, progress: ImportProgress, result: ImportResult) -> None:
    Upload.objects.filter(pk=upload.pk, state=Upload.State.RUNNING, claimed_by=worker).update(
        state=Upload.State.DONE,
        finished_at=timezone.now(),
        lines_read=progress.lines,
        rows_written=progress.rows,
        batch=result.batch,
        lines=result.lines,
        created=result.created,
        unchanged=result.unchanged,
        replaced=result.replaced,
        warnings=[_without_folder(warning, upload) for warning in result.warnings],
    )
    progress_path(upload).unlink(missing_ok=True)


def progress_write(upload: Upload, progress: ImportProgress) -> None:
    """Write how far the import got, whole or not at all (a reader never sees half a file)."""
    path = progress_path(upload)
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps({"lines": progress.lines, "rows": progress.rows, "bytes": progress.bytes}))
    os.replace(partial, path)


# --- what the pages read ----------------------------------------------------------------


@dataclass(frozen=True)
class UploadProgress:
    lines: int  # lines read
    rows: int  # rows written
    percent: int  # of the file's bytes read


def upload_progress(upload: Upload) -> UploadProgress:
    """How far the import got: the worker's last report while it runs, the row's numbers once it ended."""
    if upload.state == Upload.State.DONE:
        return UploadProgress(lines=upload.lines_read, rows=upload.rows_written, percent=100)
    if upload.state != Upload.State.RUNNING:
        return UploadProgress(lines=upload.lines_read, rows=upload.rows_written, percent=0)
    try:
        seen = json.loads(progress_path(upload).read_text())
    except (OSError, ValueError):
        return UploadProgress(lines=0, rows=0, percent=0)
    # Below 100 until the worker says it is done (the switch, or the database's commit, may follow the reading).
    percent = min(99, int(100 * seen["bytes"] / upload.size)) if upload.size else 0
    return UploadProgress(lines=seen["lines"], rows=seen["rows"], percent=percent)


def upload_options_shown(upload: Upload) -> list[tuple[str, str]]:
    """The options that were chosen (a box left unticked or a name left empty is not shown)."""
    return [(name, str(value)) for name, value in upload.options.items() if value not in (None, "", False)]


def uploads_recent(limit: int = RECENT_UPLOADS) -> QuerySet[Upload]:
    return Upload.objects.select_related("created_by").order_by("-created_at", "-pk")[:limit]
