"""A Celery task runs in the campaign it was sent from: the scope travels in the message's headers.

A page or a command works inside a campaign; a task it queues (a comparison to
compute, a job's step) runs in a worker, outside any. Without the campaign, a
task's `.objects` would read every campaign's rows: a name looked up would
find one per campaign, a list of topics would hold another campaign's. The
header names the campaign by id; the worker enters it before the task and
leaves it after. A task sent from outside any scope runs outside any, as
before (the job engine and the uploads enter their own row's campaign).
"""

from typing import Any

from celery.signals import before_task_publish, task_postrun, task_prerun

from assessor.models import Campaign
from assessor.models.scope import scope_enter, scope_leave, scoped_campaign

HEADER = "assessor_campaign"
_TOKEN = "_assessor_campaign_token"


@before_task_publish.connect(dispatch_uid="assessor.models.scope_sent")
def scope_sent(headers: dict[str, Any] | None = None, **_kwargs: Any) -> None:
    campaign = scoped_campaign()
    if campaign is not None and headers is not None:
        headers[HEADER] = campaign.pk


@task_prerun.connect(dispatch_uid="assessor.models.scope_entered")
def scope_entered(task: Any = None, **_kwargs: Any) -> None:
    campaign_id = task.request.get(HEADER) if task is not None else None
    if campaign_id is None:
        return
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is not None:
        setattr(task.request, _TOKEN, scope_enter(campaign))


@task_postrun.connect(dispatch_uid="assessor.models.scope_left")
def scope_left(task: Any = None, **_kwargs: Any) -> None:
    token = getattr(task.request, _TOKEN, None) if task is not None else None
    if token is not None:
        setattr(task.request, _TOKEN, None)
        scope_leave(token)
