"""The first family (nugget assignment, its conditions and lists) takes fact nuggets only; the topic page shows
a topic's banks in their own section."""

import pytest
from django.urls import reverse

from assessor.jobs.engine import JobRequestInvalid
from assessor.work.roles import Role
from assignment.auto import auto_assign_job_create
from assignment.forms import AutoAssignForm
from assignment.judging import human_lists
from nuggets.banks import Answer, Question, bank_store
from nuggets.exporting import nugget_set_names
from nuggets.kinds import LABEL_FAMILY
from nuggets.models import NuggetSet
from nuggets.parts import _nugget_sets_per_topic
from nuggets.selectors import lineage_totals
from tests.builders import make_batch, make_nugget_set, make_run, make_topic, make_user, source_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_topics():
    """Topic t1 has the fact nuggets "manual"; topic t2 has a bank called "manual" too, and a bank "gold"."""
    t1, t2 = make_topic("t1", "sky"), make_topic("t2", "cats")
    make_nugget_set(t1, kind=NuggetSet.Kind.MANUAL, name="manual", nuggets=[("Sky is blue", "vital")])
    source = source_of(LABEL_FAMILY, "manual")
    question = Question(
        text="Why do cats purr?",
        importance="vital",
        rule="or",
        answers=(Answer("Contentment", ("doc-7", "doc-9")),),
    )
    bank_store(topic_id="t2", name="manual", questions=[question], source=source, kind=NuggetSet.Kind.MANUAL,
               created_by=make_user())  # fmt: skip
    bank_store(
        topic_id="t2",
        name="gold",
        questions=[question],
        source=source_of(LABEL_FAMILY, "gold"),
        imported_from=make_batch(),
    )
    return t1, t2


def test_a_bank_named_like_a_condition_is_not_one_of_its_lists(two_topics):
    assert human_lists() == [("manual", 1)]
    assert nugget_set_names() == ["manual"]
    assert _nugget_sets_per_topic() == {"t1": 1}
    assert dict(AutoAssignForm().fields["nuggets"].choices) == {"manual": "manual"}
    assert lineage_totals() == {}


def test_auto_assign_refuses_a_bank_as_its_nuggets(two_topics):
    make_run("run-a")
    with pytest.raises(JobRequestInvalid, match="no nugget set named 'gold'"):
        auto_assign_job_create(nuggets="gold", name="llm-a")


def test_the_topic_page_shows_banks_apart_with_their_answers_and_documents(client, two_topics):
    client.force_login(make_user(Role.ORGANIZER))
    page = client.get(reverse("collection:topic", args=["t2"])).content.decode()
    facts, banks = page.split('id="banks"')
    assert "Why do cats purr?" not in facts and "No nugget set for this topic yet." in facts
    assert banks.count("Why do cats purr?") == 2
    assert "Contentment" in banks and "doc-7, doc-9" in banks and ">OR<" in banks
    assert reverse("collection:download_banks", args=["gold"]) in banks
