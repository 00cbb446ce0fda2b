"""A Celery task runs in the campaign it was sent from (assessor.campaigns.tasks): the publishing side writes the
campaign into the message's headers, the worker's side enters it around the task and leaves it after."""

from types import SimpleNamespace

import pytest
from celery import Celery
from celery.app.task import Context

from assessor.campaigns.services import campaign_create
from assessor.campaigns.tasks import HEADER, scope_entered, scope_left, scope_sent
from assessor.models.scope import campaign_first, campaign_scope, scoped_campaign


@pytest.fixture
def second(db):
    campaign_first()  # (after a flush the database has none: b would be the first)
    return campaign_create(slug="b", title="B")


def _task_with(headers: dict) -> SimpleNamespace:
    """A task as the worker's signals see it: its request built from the message's headers, as Celery builds it."""
    return SimpleNamespace(request=Context(headers))


def test_a_task_sent_inside_a_campaign_carries_it_and_runs_inside_it(second):
    headers: dict = {}
    with campaign_scope(second):
        scope_sent(headers=headers)
    assert headers == {HEADER: second.pk}
    task = _task_with({"id": "t1", **headers})
    scope_entered(task=task)
    assert scoped_campaign() == second
    scope_left(task=task)
    assert scoped_campaign() is None


def test_a_task_sent_outside_any_campaign_runs_outside_any(second):
    headers: dict = {}
    scope_sent(headers=headers)
    assert headers == {}
    task = _task_with({"id": "t2"})
    scope_entered(task=task)
    assert scoped_campaign() is None
    scope_left(task=task)


def test_the_headers_reach_a_task_the_way_celery_delivers_them(second):
    """Headers as Celery builds them (protocol 2) and a request made of them: the header is read back by name."""
    app = Celery("check", set_as_current=False)
    message = app.amqp.as_task_v2("t3", "some.task", args=(), kwargs={})
    with campaign_scope(second):
        scope_sent(headers=message.headers)  # as before_task_publish hands them over, before they are sent
    request = Context(message.headers)
    task = SimpleNamespace(request=request)
    scope_entered(task=task)
    try:
        assert scoped_campaign() == second
    finally:
        scope_left(task=task)
