"""Giving work, and the active time measured on the server from actions and heartbeats."""

from datetime import UTC, datetime, timedelta

import pytest

from assessor.models import AssessorWork, WorkEvent
from assessor.work.access import WorkNotFound
from assessor.work.roles import Role
from assessor.work.services import WorkError, work_activity_record, work_heartbeat
from assessor.work.timing import active_increment, active_seconds_of
from assignment import kinds as assignment_kinds
from nuggets import kinds as nugget_kinds
from nuggets.giving import nugget_work_give
from nuggets.services import nugget_operation_apply, nugget_set_reopen, nugget_set_submit
from tests.builders import make_topic, make_user
from tests.scenarios import make_draft_set, make_given_topic, nugget_set_of

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


# --- Pure accounting --------------------------------------------------------


def test_a_gap_within_the_idle_limit_counts_in_full():
    assert active_increment(last_activity_at=at(0), now=at(299), idle_limit_seconds=300) == 299


def test_a_gap_beyond_the_idle_limit_counts_nothing():
    assert active_increment(last_activity_at=at(0), now=at(301), idle_limit_seconds=300) == 0


def test_the_first_action_and_a_clock_going_back_count_nothing():
    assert active_increment(last_activity_at=None, now=at(10), idle_limit_seconds=300) == 0
    assert active_increment(last_activity_at=at(10), now=at(5), idle_limit_seconds=300) == 0


def test_a_session_with_a_coffee_break():
    # Work 0..120 s in 60 s steps, a 400 s break, then 30 s more: 60 + 60 + 0 + 30.
    times = [at(0), at(60), at(120), at(520), at(550)]
    assert active_seconds_of(times, idle_limit_seconds=300) == 150


# --- On the server ----------------------------------------------------------


@pytest.mark.django_db
def test_heartbeats_and_edits_credit_active_time_except_idle_gaps(settings):
    settings.WORK_IDLE_SECONDS = 300
    work = make_given_topic(condition="manual")
    assert work.status == AssessorWork.Status.NOT_STARTED
    for seconds in (0, 30, 60, 90):
        work_heartbeat(work_id=work.pk, user=work.assessor, kinds=[work.kind], now=at(seconds))
    work_heartbeat(work_id=work.pk, user=work.assessor, kinds=[work.kind], now=at(90 + 600))  # back from a 10 min break
    work_heartbeat(work_id=work.pk, user=work.assessor, kinds=[work.kind], now=at(90 + 600 + 45))
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.IN_PROGRESS
    assert work.active_seconds == pytest.approx(90 + 45)
    assert work.last_activity_at == at(735)


@pytest.mark.django_db
def test_the_idle_limit_is_a_setting(settings):
    settings.WORK_IDLE_SECONDS = 60
    work = make_given_topic(condition="manual")
    work_heartbeat(work_id=work.pk, user=work.assessor, kinds=[work.kind], now=at(0))
    work_heartbeat(work_id=work.pk, user=work.assessor, kinds=[work.kind], now=at(90))
    work.refresh_from_db()
    assert work.active_seconds == 0


@pytest.mark.django_db
def test_an_edit_credits_time_to_the_work_the_set_and_the_nugget_it_made():
    work = make_given_topic(condition="manual")
    now = datetime.now(UTC)
    AssessorWork.objects.filter(pk=work.pk).update(
        last_activity_at=now - timedelta(seconds=40), active_seconds=100, status=AssessorWork.Status.IN_PROGRESS
    )
    result = nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation="add", params={"text": "a fact"}, expected_version=0
    )
    work.refresh_from_db()
    assert 140 <= work.active_seconds < 150
    nugget = nugget_set_of(work).nuggets.get()
    assert nugget.pk == result.focus_id and 40 <= nugget.seconds_spent < 50
    assert nugget.created_by == work.assessor
    assert nugget_set_of(work).seconds_spent == work.active_seconds


@pytest.mark.django_db
def test_submitted_work_earns_no_time_and_reopening_starts_a_new_stretch():
    work = make_given_topic(condition="manual")
    organizer = make_user(Role.ORGANIZER)
    nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation="add", params={"text": "a", "importance": "vital"}, expected_version=0
    )
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=1)
    work.refresh_from_db()
    spent = work.active_seconds
    work_heartbeat(work_id=work.pk, user=work.assessor, kinds=[work.kind], now=work.last_activity_at + timedelta(seconds=30))
    work.refresh_from_db()
    assert work.active_seconds == spent
    nugget_set_reopen(work_id=work.pk, by=organizer)
    work.refresh_from_db()
    assert work.last_activity_at is None
    assert work_activity_record(work=work, now=at(0)) == 0


@pytest.mark.django_db
def test_a_heartbeat_for_someone_elses_work_is_refused():
    work = make_given_topic(condition="manual")
    with pytest.raises(WorkNotFound):
        work_heartbeat(work_id=work.pk, user=make_user(Role.ASSESSOR), kinds=[work.kind], now=at(0))


@pytest.mark.django_db
def test_a_heartbeat_for_work_of_another_kind_is_refused_before_any_time_is_credited():
    work = make_given_topic(condition="manual")
    work_heartbeat(work_id=work.pk, user=work.assessor, kinds=[work.kind], now=at(0))
    with pytest.raises(WorkNotFound):
        work_heartbeat(work_id=work.pk, user=work.assessor, kinds=[assignment_kinds.ASSIGN_MANUAL], now=at(30))
    work.refresh_from_db()
    assert (work.active_seconds, work.last_activity_at) == (0, at(0))


# --- Giving work ------------------------------------------------------------


@pytest.mark.django_db
def test_only_an_assessor_can_be_given_a_topic():
    organizer = make_user(Role.ORGANIZER)
    with pytest.raises(WorkError, match="not an assessor"):
        nugget_work_give(topic=make_topic(), assessor=make_user(Role.ORGANIZER), condition="manual", by=organizer)


@pytest.mark.django_db
def test_a_topics_human_work_is_done_by_one_assessor():
    organizer = make_user(Role.ORGANIZER)
    work = make_given_topic(condition="manual", organizer=organizer)
    make_draft_set(work.topic, ["a", "b"])
    with pytest.raises(WorkError, match="already given to"):
        nugget_work_give(topic=work.topic, assessor=make_user(Role.ASSESSOR), condition="auto_edit", by=organizer)
    both = nugget_work_give(topic=work.topic, assessor=work.assessor, condition="auto_edit", by=organizer)
    assert both.kind == nugget_kinds.NUGGETS_AUTO_EDIT and both.nugget_set_name == "auto_edit"
    with pytest.raises(WorkError, match="already has"):
        nugget_work_give(topic=work.topic, assessor=work.assessor, condition="manual", by=organizer, name="manual-2")
    assert WorkEvent.objects.filter(action="given").count() == 2


@pytest.mark.django_db
def test_post_editing_needs_drafts():
    organizer = make_user(Role.ORGANIZER)
    topic = make_topic()
    with pytest.raises(WorkError, match="no draft nuggets"):
        nugget_work_give(topic=topic, assessor=make_user(Role.ASSESSOR), condition="auto_edit", by=organizer)
    assert not AssessorWork.objects.exists()


@pytest.mark.django_db
def test_post_editing_uses_the_named_or_newest_drafts():
    organizer = make_user(Role.ORGANIZER)
    topic = make_topic()
    make_draft_set(topic, ["old"], name="draft-old")
    make_draft_set(topic, ["new"], name="draft-new")
    work = nugget_work_give(topic=topic, assessor=make_user(Role.ASSESSOR), condition="auto_edit", by=organizer)
    assert nugget_set_of(work).drafts.name == "draft-new"
    other = make_topic()
    make_draft_set(other, ["old"], name="draft-old")
    make_draft_set(other, ["new"], name="draft-new")
    work = nugget_work_give(
        topic=other, assessor=make_user(Role.ASSESSOR), condition="auto_edit", by=organizer, drafts_name="draft-old"
    )
    assert [n.text for n in nugget_set_of(work).nuggets.all()] == ["old"]
