"""The assessors' pages of the five label apps are one piece of code (assessor.work.kit): the same rules hold on each."""

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from argue.kinds import ARGUE_WORK
from argue.views import ARGUE_JUDGING
from assessor.models import AssessorWork
from assessor.work.kit import LabelApp
from assessor.work.roles import Role
from assignment.judge_views import MANUAL_ASSIGN
from assignment.kinds import ASSIGN_MANUAL
from grades.judge_views import GRADING
from grades.kinds import GRADE_WORK
from preferences.kinds import PREFERENCE_WORK
from preferences.views import PREFERENCE_JUDGING
from support.judge_views import SUPPORT_JUDGING
from support.kinds import SUPPORT_SCRATCH
from tests.builders import make_topic, make_user

pytestmark = pytest.mark.django_db

APPS = [
    (GRADING, GRADE_WORK),
    (PREFERENCE_JUDGING, PREFERENCE_WORK),
    (ARGUE_JUDGING, ARGUE_WORK),
    (MANUAL_ASSIGN, ASSIGN_MANUAL),
    (SUPPORT_JUDGING, SUPPORT_SCRATCH),
]
# Each app's work beside another app's kind: the pages of one app must not open the other's.
ANOTHER_KIND = {kind: APPS[(index + 1) % len(APPS)][1] for index, (_app, kind) in enumerate(APPS)}
# Apps whose start page on a topic with nothing to judge says so (ARGUE's work needs its bank to open at all).
EMPTY_ON_START = [(app, kind) for app, kind in APPS if kind != ARGUE_WORK]


def open_work(kind: str, assessor) -> AssessorWork:
    return AssessorWork.objects.create(topic=make_topic(), assessor=assessor, kind=kind)


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def assessor_pages(app: LabelApp, work: AssessorWork) -> list[str]:
    return [
        reverse(f"{app.namespace}:{app.start_name}", args=[work.pk]),
        reverse(f"{app.namespace}:{app.item}", args=[work.pk, 1]),
    ]


@pytest.mark.parametrize(("app", "kind"), APPS, ids=[app.namespace for app, _ in APPS])
def test_an_assessor_opens_no_work_of_another_assessor_nor_of_another_kind(app, kind):
    assessor = make_user(Role.ASSESSOR)
    someone_elses = open_work(kind, make_user(Role.ASSESSOR))
    own_of_another_kind = open_work(ANOTHER_KIND[kind], assessor)
    client = client_for(assessor)
    checked = 0
    for work in (someone_elses, own_of_another_kind):
        for url in assessor_pages(app, work):
            assert client.get(url).status_code == 404, url
            checked += 1
        label = reverse(f"{app.namespace}:label", args=[work.pk, 1])
        assert client.post(label, {"label": app.label_choices[0][0]}).status_code == 404, label
        checked += 1
    assert checked == 6


@pytest.mark.parametrize(("app", "kind"), APPS, ids=[app.namespace for app, _ in APPS])
def test_the_label_and_submit_pages_take_only_posts_and_the_pages_only_assessors(app, kind):
    assessor = make_user(Role.ASSESSOR)
    work = open_work(kind, assessor)
    client = client_for(assessor)
    assert client.get(reverse(f"{app.namespace}:label", args=[work.pk, 1])).status_code == 405
    assert client.get(reverse(f"{app.namespace}:submit", args=[work.pk])).status_code == 405
    organizer = client_for(make_user(Role.ORGANIZER))
    assert organizer.get(reverse(f"{app.namespace}:{app.start_name}", args=[work.pk])).status_code == 403


@pytest.mark.parametrize(("app", "kind"), EMPTY_ON_START, ids=[app.namespace for app, _ in EMPTY_ON_START])
def test_the_start_page_of_a_topic_with_nothing_to_judge_says_so_on_the_home_page(app, kind):
    assessor = make_user(Role.ASSESSOR)
    work = open_work(kind, assessor)
    response = client_for(assessor).get(reverse(f"{app.namespace}:{app.start_name}", args=[work.pk]))
    assert response.status_code == 302 and response["Location"] == reverse("home")
    said = [str(message) for message in get_messages(response.wsgi_request)]
    assert said == [f"Topic {work.topic_id} {app.empty}."]
