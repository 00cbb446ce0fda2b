"""Rules every assessor write keeps: it says the version it was made on, and an operation id names one operation."""

import pytest
from django.urls import reverse

from assessor.models import WorkOperation
from assessor.work.roles import Role
from assignment.judging import assign_work_give
from assignment.models import AssignmentLabel
from nuggets.models import NuggetEdit, NuggetSet
from tests.builders import make_answer, make_run, make_topic, make_user, source_of
from tests.scenarios import make_given_topic, texts_of

pytestmark = pytest.mark.django_db

SCRIPT = {"HTTP_ACCEPT": "application/json"}


def op_url(work, operation: str) -> str:
    return reverse("nuggets:op", args=[work.pk, operation])


def test_a_nugget_change_without_a_version_is_refused_not_applied_over_a_newer_list(client):
    work = make_given_topic(condition="manual")
    client.force_login(work.assessor)
    assert client.post(op_url(work, "add"), {"text": "first", "version": 0}, **SCRIPT).status_code == 200
    refused = client.post(op_url(work, "add"), {"text": "no version"}, **SCRIPT)
    assert refused.status_code == 409 and "which version" in refused.json()["error"]
    assert texts_of(work) == ["first"]


def test_a_nugget_operation_id_names_one_operation(client):
    work = make_given_topic(condition="manual")
    client.force_login(work.assessor)
    first = client.post(op_url(work, "add"), {"text": "once", "version": 0, "op_id": "op-1"}, **SCRIPT)
    assert first.status_code == 200
    # The same request again (its answer was lost): answered, applied once.
    replay = client.post(op_url(work, "add"), {"text": "once", "version": 0, "op_id": "op-1"}, **SCRIPT)
    assert replay.status_code == 200 and texts_of(work) == ["once"]
    # The same id for another operation is refused, not silently answered.
    nugget = NuggetSet.objects.get(topic_id=work.topic_id).nuggets.get()
    importance = {"nugget": nugget.pk, "importance": "vital", "version": 1, "op_id": "op-1"}
    other = client.post(op_url(work, "importance"), importance, **SCRIPT)
    assert other.status_code == 400 and "already used" in other.json()["error"]
    # And for the same operation made on another version.
    again = client.post(op_url(work, "add"), {"text": "twice", "version": 1, "op_id": "op-1"}, **SCRIPT)
    assert again.status_code == 400 and texts_of(work) == ["once"]
    assert list(NuggetEdit.objects.values_list("operation", flat=True)) == ["add"]


def assign_work():
    assessor = make_user(Role.ASSESSOR)
    topic = make_topic()
    nugget_set = NuggetSet.objects.create(
        topic=topic,
        kind="manual",
        name="manual",
        source=source_of("nuggets", "manual", kind="person"),
        created_by=assessor,
        status=NuggetSet.Status.SUBMITTED,
    )
    nuggets = [
        nugget_set.nuggets.create(position=i, text=text, importance="vital", created_by=assessor)
        for i, text in enumerate(["zebras have stripes", "lions roar"])
    ]
    make_answer(make_run(), topic, [("Zebras have stripes.", [])])
    return assign_work_give(topic=topic, assessor=assessor, by=None), nuggets


def test_a_label_without_a_version_is_refused(client):
    work, nuggets = assign_work()
    client.force_login(work.assessor)
    url = reverse("judge:label", args=[work.pk, 1])
    refused = client.post(url, {"nugget": nuggets[0].pk, "label": "support", "previous": ""}, **SCRIPT)
    assert refused.status_code == 409 and "which version" in refused.json()["error"]
    assert not AssignmentLabel.objects.exists()


def test_a_label_operation_id_names_one_save(client):
    work, nuggets = assign_work()
    client.force_login(work.assessor)
    url = reverse("judge:label", args=[work.pk, 1])
    fields = {"nugget": nuggets[0].pk, "label": "support", "previous": "", "version": work.version, "op_id": "op-9"}
    assert client.post(url, fields, **SCRIPT).status_code == 200
    assert client.post(url, fields, **SCRIPT).json()["label"] == "support"
    for changed in ({"label": "not_support", "previous": "support"}, {"nugget": nuggets[1].pk}):
        refused = client.post(url, {**fields, **changed}, **SCRIPT)
        assert refused.status_code == 400 and "already used" in refused.json()["error"]
    assert list(AssignmentLabel.objects.values_list("nugget_id", "label")) == [(nuggets[0].pk, "support")]
    assert WorkOperation.objects.count() == 1
