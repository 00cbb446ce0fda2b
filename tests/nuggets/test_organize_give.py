"""Giving nugget work on the organizer's page: all topics or none, and a refusal said once."""

import pytest
from django.urls import reverse

from assessor.models import AssessorWork
from assessor.work.roles import Role
from nuggets.giving import nugget_work_give
from tests.builders import make_topic, make_user

pytestmark = pytest.mark.django_db


def test_a_refused_give_names_its_topic_once_and_gives_nothing(client):
    organizer = make_user(Role.ORGANIZER)
    first, taken = make_topic(), make_topic()
    nugget_work_give(topic=taken, assessor=make_user(Role.ASSESSOR), condition="manual", by=organizer)
    other = make_user(Role.ASSESSOR)
    client.force_login(organizer)
    response = client.post(
        reverse("nuggets:organize"),
        {"topics": f"{first.pk} {taken.pk}", "assessor": other.pk, "condition": "manual"},
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert page.count("Nothing was given.") == 1 and taken.pk in page
    assert not AssessorWork.objects.filter(assessor=other).exists()


def test_a_give_names_the_condition_and_the_topics(client):
    organizer = make_user(Role.ORGANIZER)
    one, two = make_topic(), make_topic()
    assessor = make_user(Role.ASSESSOR)
    client.force_login(organizer)
    fields = {"topics": f"{one.pk}, {two.pk}", "assessor": assessor.pk, "condition": "auto_edit"}
    # AutoNuggets+Edits needs drafts: refused for both, nothing given.
    refused = client.post(reverse("nuggets:organize"), fields)
    assert refused.status_code == 400 and not AssessorWork.objects.exists()
    response = client.post(reverse("nuggets:organize"), {**fields, "condition": "manual"}, follow=True)
    assert f"Given to {assessor} (ManualNuggets): {one.pk}, {two.pk}." in response.content.decode()
    assert sorted(AssessorWork.objects.values_list("topic_id", flat=True)) == sorted([one.pk, two.pk])
