"""Which nugget sets count, in one place: the selectors, the banks, the exports and the giving of post-edits read it.

It imports no other module of the app but its models, so that any of them (the giving of work among them, which
the selectors read) can ask it without a cycle.
"""

from django.db.models import Q

from assessor.scoring.lifecycle import open_included, unfinished_job_ids
from nuggets.models import NuggetSet


def nugget_sets_counted_q(prefix: str = "") -> Q:
    """Nugget sets whose nuggets scores count: submitted lists, not made by a job still running.

    A list reopened for editing counts for nothing until it is submitted again
    (assessor.scoring.lifecycle, unless open work is included).
    """
    if open_included():
        return Q()
    return Q(**{f"{prefix}status": NuggetSet.Status.SUBMITTED}) & ~Q(**{f"{prefix}job_id__in": unfinished_job_ids()})
