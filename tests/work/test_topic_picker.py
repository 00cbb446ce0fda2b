"""The topic picker of the give forms: each topic with its state, checkboxes or typed ids, the same validation."""

import re

import pytest
from django.urls import reverse

from assessor.models import AssessorWork
from assessor.work.roles import Role
from assessor.work.topic_picker import topic_choices
from nuggets import kinds as nugget_kinds
from support import kinds as support_kinds
from tests.builders import make_qrel, make_segment, make_topic, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def topics():
    """Three topics: one with relevant segments from two sources and work on it, one with none, one plain."""
    busy, bare, plain = make_topic("2024-1", "why bees see ultraviolet"), make_topic("2024-2"), make_topic("2024-3")
    for grade in (3, 1, 0):
        make_qrel(busy, make_segment(), grade=grade, source="nist")
    make_qrel(busy, make_segment(), grade=2, source="umbrela")
    make_qrel(plain, make_segment(), grade=1, source="nist")
    alice = make_user(Role.ASSESSOR, username="alice")
    AssessorWork.objects.create(topic=busy, assessor=alice, kind=nugget_kinds.NUGGETS_MANUAL)
    AssessorWork.objects.create(
        topic=busy, assessor=alice, kind=support_kinds.SUPPORT_SCRATCH, status=AssessorWork.Status.SUBMITTED
    )
    return busy, bare, plain


def test_each_topic_comes_with_its_relevant_segments_and_the_work_given_on_it(topics):
    choices = {choice.topic_id: choice for choice in topic_choices()}
    assert list(choices) == ["2024-1", "2024-2", "2024-3"]
    # Grade 1 or more: nist's 3 and 1 count, its 0 does not.
    assert choices["2024-1"].relevant == [("nist", 2), ("umbrela", 1)]
    assert choices["2024-2"].relevant == []
    assert choices["2024-3"].relevant == [("nist", 1)]
    assert choices["2024-1"].work == [
        ("ManualNuggets", "alice", "not started"),
        ("Support from scratch", "alice", "submitted"),
    ]
    assert choices["2024-2"].work == [] and choices["2024-3"].work == []


@pytest.mark.parametrize("url_name", ["nuggets:organize", "judge:organize", "support:organize"])
def test_every_give_form_shows_the_picker_instead_of_a_textarea(organizer, topics, url_name):
    page = organizer.get(reverse(url_name)).content.decode()
    form = page.split('id="give-form"', 1)[1].split("</form>", 1)[0]
    assert "<textarea" not in form
    assert re.findall(r'<input type="checkbox" name="topics" value="([\w-]+)"', form) == ["2024-1", "2024-2", "2024-3"]
    row = form.split('value="2024-1"', 1)[1].split("</li>", 1)[0]
    assert "why bees see ultraviolet" in row
    assert "nist: 2 relevant" in row and "umbrela: 1 relevant" in row
    assert "ManualNuggets: alice, not started" in row and "Support from scratch: alice, submitted" in row
    assert "no relevant segments" in form.split('value="2024-2"', 1)[1].split("</li>", 1)[0]


def test_ticked_and_typed_topics_are_given_together(organizer, topics):
    bob = make_user(Role.ASSESSOR, username="bob")
    response = organizer.post(
        reverse("nuggets:organize"),
        {"topics": ["2024-2"], "topics_typed": "2024-3", "assessor": bob.pk, "condition": "manual"},
    )
    assert response.status_code == 302
    given = AssessorWork.objects.filter(assessor=bob).values_list("topic_id", "kind")
    assert sorted(given) == [("2024-2", "nuggets_manual"), ("2024-3", "nuggets_manual")]


def test_unknown_topics_are_refused_by_name_and_stay_in_the_box(organizer, topics):
    bob = make_user(Role.ASSESSOR, username="bob")
    response = organizer.post(
        reverse("nuggets:organize"),
        {"topics": ["2024-2", "2024-99"], "topics_typed": "nope", "assessor": bob.pk, "condition": "manual"},
    )
    page = response.content.decode()
    assert "Unknown topic(s): 2024-99, nope." in page
    assert not AssessorWork.objects.filter(assessor=bob).exists()
    # What was ticked stays ticked; the unknown ids wait in the box to be fixed.
    assert '<input type="checkbox" name="topics" value="2024-2" checked>' in page
    assert 'name="topics_typed" id="id_topics_typed" value="2024-99 nope"' in page
