"""Deleting an upload made by mistake: refused while anything depends on it, recorded in the audit trail.

The kinds of upload come from the registry (`Deletable`); the collection registers its
qrels sources here, the apps their nugget sets and score tables.
"""

from collections import defaultdict

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, ProtectedError

from assessor.models import AuditEntry, Job, LabelSource, QrelSource
from assessor.registry import Deletable, UploadRow, registry
from assessor.scoring.kept import scores_refresh


def counted(number: int, noun: str) -> str:
    """ "1 grade", "3 grades": the summaries and reasons the organizer reads."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


class DeleteRefused(Exception):
    """Something depends on the upload; `reasons` say what, for the organizer."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def upload_rows(deletable: Deletable) -> list[UploadRow]:
    """The uploads of one kind, with what their own app and every other app says stops their deletion."""
    reasons: dict[str, list[str]] = defaultdict(list)
    for dependents in registry.upload_dependents.get(deletable.kind, []):
        for name, more in dependents().items():
            reasons[name].extend(more)
    return [
        UploadRow(name=row.name, summary=row.summary, blockers=[*row.blockers, *reasons.get(row.name, [])])
        for row in deletable.rows()
    ]


def upload_listing() -> list[tuple[Deletable, list[UploadRow]]]:
    """Every kind of deletable upload with its uploads, for the upload page."""
    return [(deletable, upload_rows(deletable)) for deletable in registry.deletables.values()]


def upload_row(*, kind: str, name: str) -> UploadRow | None:
    """The upload of that kind and name, or None when there is none."""
    deletable = registry.deletables.get(kind)
    if deletable is None:
        return None
    return next((row for row in upload_rows(deletable) if row.name == name), None)


def upload_delete(*, kind: str, name: str, actor: User) -> str:
    """Delete the upload and record who deleted what; says what was deleted. Raises DeleteRefused, LookupError."""
    deletable = registry.deletables[kind]
    with transaction.atomic():
        # Checked again inside the transaction: a label may have arrived since the confirmation page.
        row = upload_row(kind=kind, name=name)
        if row is None:
            raise LookupError(f"no {deletable.label} named {name!r}")
        if row.blockers:
            raise DeleteRefused(row.blockers)
        deleted = deletable.delete(name)
        # What the upload held may have been scored (labels, nuggets, a run's answers).
        scores_refresh()
        AuditEntry.objects.create(
            actor=actor,
            actor_name=actor.get_username(),
            action=AuditEntry.Action.UPLOAD_DELETE,
            target=f"{deletable.label} {name}",
            detail=deleted,
        )
    return deleted


def label_sources_release(source_ids: set[int]) -> None:
    """Free the names a deleted upload owned, so that a corrected file (or anyone) may use them again.

    A source something else still points at stays.
    """
    for source in LabelSource.objects.filter(pk__in=source_ids):
        try:
            with transaction.atomic():
                source.delete()
        except ProtectedError:
            pass


# --- qrels sources ---------------------------------------------------------------------------


def _jobs_reading_qrels() -> dict[str, list[int]]:
    """The jobs that read each qrels source (AutoNuggets jobs name theirs in `params`)."""
    readers: dict[str, list[int]] = defaultdict(list)
    for job_id, params in Job.objects.filter(params__has_key="qrels").values_list("pk", "params"):
        readers[str(params.get("qrels") or "")].append(job_id)
    return readers


def qrels_upload_rows() -> list[UploadRow]:
    readers = _jobs_reading_qrels()
    rows = []
    for source in QrelSource.objects.annotate(grades=Count("qrels")).order_by("name"):
        blockers = []
        if source.job_id:
            blockers.append(f"made by LLM job #{source.job_id}, not uploaded")
        if readers.get(source.name):
            jobs = ", ".join(f"#{job_id}" for job_id in sorted(readers[source.name]))
            blockers.append(f"LLM jobs read it: {jobs} (what they made came from these grades)")
        rows.append(UploadRow(name=source.name, summary=counted(source.grades, "grade"), blockers=blockers))
    return rows


def qrels_delete(name: str) -> str:
    source = QrelSource.objects.get(name=name)
    grades = source.qrels.count()
    source.delete()
    label_sources_release({source.source_id})
    return counted(grades, "grade")


QRELS_DELETABLE = Deletable(kind="qrels", label="qrels source", rows=qrels_upload_rows, delete=qrels_delete, order=10)
