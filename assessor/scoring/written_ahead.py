"""A new source's answer rows written while its job still runs, ahead of the job's end.

A job's end makes its labels count and, for a source kept from then on (a job's first labels under its name), writes
every answer's kept row in the transaction that marks the job done: for 2,000 answers most of the end's time went to
that insert and to the checks of its keys at the commit (assessor.scoring.kept). While the job's last items are still
out, the rows a family's read ahead gives (`ScoreFamily.job_prepare`) are written under a source of their own, of the
family `WRITTEN_AHEAD`, which no page lists; this process keeps what it wrote. The end computes every row as before,
gives that source its name, and writes only the rows that differ from those written ahead (the answers of the items
not done then, and any other whose figures changed meanwhile), deleting those written ahead that it does not keep:
what the end leaves is what it would have written alone. A source written ahead by another process, or left by a
worker that stopped, is deleted by the job's end (`ahead_dropped`), as is a cancelled job's.
"""

from dataclasses import dataclass
from typing import Any

from assessor.models import KeptSource
from assessor.scoring.job_kept import JobKept

Columns = tuple[str, ...]

# Jobs whose rows a process keeps at once: those of a job whose end is finished elsewhere are dropped in time.
JOBS_KEPT = 8


@dataclass(frozen=True)
class RowsAhead:
    """The rows written ahead for one source of a job: under the hidden source `source_id`, by answer id."""

    source_id: int
    campaign_id: int | None
    rows: dict[int, dict[str, Any]]  # as `rows_insert` took them: source_id, answer_id, run_id, topic_id, values


_kept: JobKept[tuple[str, Columns], RowsAhead] = JobKept(JOBS_KEPT)


def ahead_name(job_id: int, family: str, name: str) -> str:
    """The hidden source's name: its job's, then the source's own (unique in a campaign with the family)."""
    return f"{_job_prefix(job_id)}{family}:{name}"


def _job_prefix(job_id: int) -> str:
    return f"{job_id}:"


def rows_ahead_keep(job_id: int, family: str, columns: Columns, ahead: RowsAhead) -> None:
    _kept.keep(job_id, (family, columns), ahead)


def rows_ahead_take(job_id: int, family: str, columns: Columns) -> RowsAhead | None:
    """What this process wrote ahead for the source, taken: one end uses it (a retried end writes every row)."""
    return _kept.take(job_id, (family, columns))


def ahead_dropped(job_id: int) -> None:
    """Delete what is still written ahead for the job (its end has named what it used), and forget it here."""
    _kept.drop(job_id)
    KeptSource.written_ahead.filter(name__startswith=_job_prefix(job_id)).delete()
