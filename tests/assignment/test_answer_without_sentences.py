"""ManualAssign shows the text of an answer whose file gave no sentence split, and it can be labelled."""

import pytest
from django.urls import reverse

from assessor.models import Answer
from assessor.work.roles import Role
from assignment.judging import assign_work_give
from assignment.models import AssignmentLabel
from nuggets.models import NuggetSet
from tests.builders import make_run, make_topic, make_user, source_of

pytestmark = pytest.mark.django_db


def test_an_answer_without_sentences_shows_its_text_and_takes_labels(client):
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
    nugget = nugget_set.nuggets.create(position=0, text="zebras have stripes", importance="vital", created_by=assessor)
    text = "Zebras have black and white stripes that confuse flies."
    Answer.objects.create(run=make_run(), topic=topic, text=text, words=len(text.split()))
    work = assign_work_give(topic=topic, assessor=assessor, by=None)
    client.force_login(assessor)
    page = client.get(reverse("judge:answer", args=[work.pk, 1])).content.decode()
    assert text in page and "This answer is empty." not in page
    response = client.post(
        reverse("judge:label", args=[work.pk, 1]),
        {"nugget": nugget.pk, "label": "support", "previous": "", "version": work.version},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 200
    assert AssignmentLabel.objects.get(nugget=nugget).label == "support"


def test_an_answer_without_any_text_says_it_is_empty(client):
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
    nugget_set.nuggets.create(position=0, text="zebras have stripes", importance="vital", created_by=assessor)
    Answer.objects.create(run=make_run(), topic=topic, text="", words=0)
    work = assign_work_give(topic=topic, assessor=assessor, by=None)
    client.force_login(assessor)
    assert "This answer is empty." in client.get(reverse("judge:answer", args=[work.pk, 1])).content.decode()
