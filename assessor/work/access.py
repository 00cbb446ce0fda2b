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
    *, work_id: int, user: User, kinds: Sequence[str], lock: bool = False
) -> AssessorWork:
    """The assessor's own work `work_id` of one of `kinds`, with its topic; locked for update with `lock`."""
    works = AssessorWork.objects.select_related("topic")
    if lock:
        # "of=self": lock the work's row only, not the topic joined for reading.
        works = works.select_for_update(of=("self",))
    try:
        return works.get(pk=work_id, assessor_id=user.pk, kind__in=list(kinds))
    except AssessorWork.DoesNotExist:
        raise WorkNotFound("No such work of yours.") from None
