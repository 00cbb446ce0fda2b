"""Giving one topic from several sessions at the same moment: one gets the work, the others are told it exists."""

import threading

import pytest
from django.db import connection, connections

from assessor.models import AssessorWork, LabelSource
from assessor.work.roles import Role
from assessor.work.services import WorkError
from nuggets.giving import nugget_work_give
from nuggets.kinds import LABEL_FAMILY
from tests.builders import make_topic, make_user, source_of

pytestmark = [
    pytest.mark.skipif(connection.vendor == "sqlite", reason="sessions writing at once need PostgreSQL (set DATABASE_URL)"),
    pytest.mark.django_db(transaction=True),
]


def given_at_once(give, count: int) -> list[str]:
    """Run `give` from `count` threads released together; each outcome is "given" or the refusal's message."""
    start = threading.Barrier(count)
    outcomes: list[str] = [""] * count

    def one(index: int) -> None:
        try:
            connection.ensure_connection()  # connected before the start, so that the gives overlap
            start.wait()
            give(index)
            outcomes[index] = "given"
        except WorkError as refused:
            outcomes[index] = refused.message
        except Exception as exc:  # the failure under test: anything else is a 500 for the organizer
            outcomes[index] = f"{type(exc).__name__}: {exc}"
        finally:
            connections.close_all()

    threads = [threading.Thread(target=one, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.mark.parametrize("round_", range(5))
def test_four_sessions_giving_one_topic_get_one_work_and_three_refusals(round_):
    topic = make_topic(f"2024-{round_}")
    assessor = make_user(Role.ASSESSOR)
    organizer = make_user(Role.ORGANIZER)
    # The people's source exists already (other topics' lists), as in a campaign under way.
    source_of(LABEL_FAMILY, "manual", kind=LabelSource.Kind.PERSON)
    outcomes = given_at_once(
        lambda _: nugget_work_give(topic=topic, assessor=assessor, condition="manual", by=organizer), 4
    )
    assert outcomes.count("given") == 1, outcomes
    refusals = [outcome for outcome in outcomes if outcome != "given"]
    assert all(refusal.startswith(f"Topic {topic.pk} already has") for refusal in refusals), refusals
    assert AssessorWork.objects.filter(topic=topic).count() == 1


def test_two_assessors_given_one_topic_at_once_never_share_it():
    topic = make_topic("2024-9")
    assessors = [make_user(Role.ASSESSOR) for _ in range(2)]
    organizer = make_user(Role.ORGANIZER)
    for index in range(2):
        source_of(LABEL_FAMILY, f"list{index}", kind=LabelSource.Kind.PERSON)
    conditions = ["manual", "manual"]
    outcomes = given_at_once(
        lambda index: nugget_work_give(
            topic=topic, assessor=assessors[index], condition=conditions[index], by=organizer, name=f"list{index}"
        ),
        2,
    )
    assert outcomes.count("given") == 1, outcomes
    assert AssessorWork.objects.filter(topic=topic).values("assessor").distinct().count() == 1
