"""A condition's label tallies read ahead of an AutoAssign job's end, kept in the worker's process until then.

A job's end makes its labels count and refreshes the kept scores of its conditions over its topics, in the
transaction that marks it done (assessor.scoring.kept). Reading the tallies of every answer of those topics is most
of that refresh; while the job's last items are still out, they are read ahead, the job's labels counted as they
will be (`condition_job_prepare` in assignment.selectors), and the end reads again only the answers of the items
that were not done then. What was read stands only if nothing it stood on changed in between: the condition's kept
source has the same stamp (every write to its counted labels refreshes it), its nugget sets read the same, the
assigner's labels but those of the items not done then are the same (`LabelsFingerprint`: a reworded nugget's
labels are retired with no other trace on a source not kept yet), and the job's topics are the same. Otherwise the
end reads everything, as it does in a process that read nothing ahead (a job's last item finished by another worker
process).
"""

from dataclasses import dataclass

from assessor.scoring.job_kept import JobKept

Tally = dict[tuple[str, str], int]  # (importance, label) -> labels, an answer's
# label -> (how many, the sum of their ids), over an assigner's labels: a label added, taken away or changed changes it.
LabelsFingerprint = dict[str, tuple[int, int]]

# Jobs whose tallies a process keeps at once: one whose end is finished elsewhere is dropped in time.
JOBS_KEPT = 8


@dataclass(frozen=True)
class TalliesAhead:
    """One condition's tallies over a job's topics, as read while the job ran."""

    stamp: str | None  # the condition's kept source's stamp, read before the labels (None: not kept yet)
    topics: frozenset[str]
    set_nuggets: dict[int, tuple[str, str]]  # nugget id -> (topic, importance), as the tallies were counted by
    tallies: dict[int, Tally]  # answer id -> its tally
    later: frozenset[int]  # the answers of the job's items not done when read: read again at the end
    labels: LabelsFingerprint  # of the assigner's labels but those of `later`, read before the tallies


_kept: JobKept[tuple[str, ...], TalliesAhead] = JobKept(JOBS_KEPT)


def ahead_keep(job_id: int, columns: tuple[str, ...], ahead: TalliesAhead) -> None:
    _kept.keep(job_id, columns, ahead)


def ahead_take(job_id: int, columns: tuple[str, ...]) -> TalliesAhead | None:
    """What was read ahead for the job's end, taken: it serves one end (a retried end reads everything)."""
    return _kept.take(job_id, columns)
