"""The one access rule for an assessor's work: their own, of the kind the page or service handles.

Every assessor view and service reaches a piece of work through `assessor_work`
before it reads or writes anything of it. Another person's work, or work of
another kind, is "not found": its existence is not revealed.
"""

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.http import Http404

from assessor.models import AssessorWork


class WorkNotFound(Http404):
    """No work of this id is the asking assessor's, of the kinds asked for."""


def assessor_work(
    *, work_id: int, user: User, kinds: Sequence[str], lock: bool = False, related: Sequence[str] = ("topic",)
) -> AssessorWork:
    """The assessor's own work `work_id` of one of `kinds`, with `related` (its topic) read in the same query;
    locked for update with `lock`."""
    # No names is no join (select_related() without them would follow every relation).
    works = AssessorWork.objects.select_related(*related) if related else AssessorWork.objects.all()
    if lock:
        # "of=self": lock the work's row only, not the rows joined for reading.
        works = works.select_for_update(of=("self",))
    try:
        return works.get(pk=work_id, assessor_id=user.pk, kind__in=list(kinds))
    except AssessorWork.DoesNotExist:
        raise WorkNotFound("No such work of yours.") from None
