"""The organizer's pages of ManualAssign and support judging are one piece of code (assessor.work.organizing):
the same rules hold on both."""

import pytest
from django.urls import reverse

from assessor.models import AssessorWork
from assessor.work.roles import Role
from assignment.kinds import ASSIGN_MANUAL
from support.kinds import SUPPORT_SCRATCH
from tests.builders import make_topic, make_user

pytestmark = pytest.mark.django_db

# (URL namespace, a kind of work its pages are for)
PAGES = [("judge", ASSIGN_MANUAL), ("support", SUPPORT_SCRATCH)]
OTHER = {ASSIGN_MANUAL: SUPPORT_SCRATCH, SUPPORT_SCRATCH: ASSIGN_MANUAL}


def submitted_work(kind: str) -> AssessorWork:
    return AssessorWork.objects.create(
        topic=make_topic(), assessor=make_user(Role.ASSESSOR), kind=kind, status=AssessorWork.Status.SUBMITTED
    )


@pytest.mark.parametrize(("namespace", "kind"), PAGES)
def test_an_unknown_topic_is_refused_and_nothing_is_given(organizer, namespace, kind):
    assessor = make_user(Role.ASSESSOR)
    response = organizer.post(reverse(f"{namespace}:organize"), {"topics": "no-such-topic", "assessor": assessor.pk})
    assert response.status_code == 400
    assert "no-such-topic" in response.content.decode()
    assert not AssessorWork.objects.exists()


@pytest.mark.parametrize(("namespace", "kind"), PAGES)
def test_reopening_sets_the_work_open_and_comes_back_to_the_organizers_page(organizer, namespace, kind):
    work = submitted_work(kind)
    response = organizer.post(reverse(f"{namespace}:reopen", args=[work.pk]), {"reason": "a typo"})
    assert response.status_code == 302 and response["Location"] == reverse(f"{namespace}:organize")
    work.refresh_from_db()
    assert (work.status, work.reopened_count) == (AssessorWork.Status.IN_PROGRESS, 1)
    assert work.events.get(action="reopened").detail["reason"] == "a typo"


@pytest.mark.parametrize(("namespace", "kind"), PAGES)
def test_each_page_serves_its_own_kinds_only(organizer, namespace, kind):
    mine, other = submitted_work(kind), submitted_work(OTHER[kind])
    assert organizer.get(reverse(f"{namespace}:organize_work", args=[mine.pk])).status_code == 200
    assert organizer.get(reverse(f"{namespace}:organize_work", args=[other.pk])).status_code == 404
    assert organizer.post(reverse(f"{namespace}:reopen", args=[other.pk])).status_code == 404
    other.refresh_from_db()
    assert other.status == AssessorWork.Status.SUBMITTED


@pytest.mark.parametrize(("namespace", "kind"), PAGES)
def test_assessors_cannot_open_the_organizers_pages(client, namespace, kind):
    work = submitted_work(kind)
    client.force_login(make_user(Role.ASSESSOR))
    assert client.get(reverse(f"{namespace}:organize")).status_code == 403
    assert client.get(reverse(f"{namespace}:organize_work", args=[work.pk])).status_code == 403
    assert client.post(reverse(f"{namespace}:reopen", args=[work.pk])).status_code == 403
