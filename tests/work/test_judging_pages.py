"""Judging pages by URL: who may open what, the organizer's forms and progress, pages without JavaScript."""

import pytest
from django.test import Client
from django.urls import reverse

from assessor.models import AssessorWork, WorkEvent
from assessor.work.roles import Role
from assignment import kinds as assignment_kinds
from assignment.judging import assign_work_give
from assignment.models import AssignmentLabel
from nuggets.models import NuggetSet
from support import kinds as support_kinds
from support.models import SupportLabel
from support.services import support_work_give
from tests.builders import make_topic, make_user, source_of
from tests.scenarios import give_assign, give_support

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def assessor_urls(assign: AssessorWork, support: AssessorWork) -> list[tuple[str, str]]:
    return [
        ("get", reverse("judge:assign", args=[assign.pk])),
        ("get", reverse("judge:answer", args=[assign.pk, 1])),
        ("post", reverse("judge:label", args=[assign.pk, 1])),
        ("post", reverse("judge:submit", args=[assign.pk])),
        ("get", reverse("support:judge", args=[support.pk])),
        ("get", reverse("support:answer", args=[support.pk, 1])),
        ("post", reverse("support:label", args=[support.pk, 1])),
        ("post", reverse("support:submit", args=[support.pk])),
    ]


def test_permissions_by_url(scenario):
    assign = give_assign(scenario)
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    other_assessor = make_user(Role.ASSESSOR)
    for method, url in assessor_urls(assign, support):
        anonymous = getattr(client_for(None), method)(url)
        assert anonymous.status_code == 302 and "/login/" in anonymous["Location"], url
        # Organizers see LLM output and run names elsewhere; the assessor's pages are not theirs.
        assert getattr(client_for(scenario.organizer), method)(url).status_code == 403, url
        # Another assessor's work does not exist for them.
        assert getattr(client_for(other_assessor), method)(url).status_code == 404, url
        if method == "get":
            assert client_for(scenario.assessor).get(url, follow=True).status_code == 200, url
    for name in ("judge:organize", "support:organize"):
        url = reverse(name)
        assert client_for(scenario.assessor).get(url).status_code == 403
        assert client_for(None).get(url).status_code == 302
        assert client_for(scenario.organizer).get(url).status_code == 200
    reopen_urls = [reverse("judge:reopen", args=[assign.pk]), reverse("support:reopen", args=[support.pk])]
    for url in reopen_urls:
        assert client_for(scenario.assessor).post(url).status_code == 403


def test_a_wrong_kind_of_work_is_not_found(scenario):
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    client = client_for(scenario.assessor)
    assert client.get(reverse("judge:answer", args=[support.pk, 1])).status_code == 404
    assert client.get(reverse("support:answer", args=[support.pk, 9])).status_code == 404


def test_labels_work_without_javascript(scenario):
    work = give_assign(scenario)
    client = client_for(scenario.assessor)
    url = reverse("judge:label", args=[work.pk, 1])
    response = client.post(url, {"nugget": scenario.nuggets[0].pk, "label": "support", "previous": "", "version": 0})
    assert response.status_code == 302 and response["Location"] == reverse("judge:answer", args=[work.pk, 1])
    assert AssignmentLabel.objects.filter(assigner="manual").count() == 1
    refused = client.post(url, {"nugget": scenario.nuggets[0].pk, "label": "maybe", "version": 0}, follow=True)
    assert "Unknown label" in refused.content.decode()


def test_organizer_gives_work_sees_progress_and_reopens(scenario):
    organizer = client_for(scenario.organizer)
    response = organizer.post(
        reverse("judge:organize"), {"topics": scenario.topic.pk, "assessor": scenario.assessor.pk, "nuggets": ""}
    )
    assert response.status_code == 302
    work = AssessorWork.objects.get(kind=assignment_kinds.ASSIGN_MANUAL)
    assert (work.assessor, work.nugget_set_name) == (scenario.assessor, "manual")
    response = organizer.post(
        reverse("support:organize"),
        {
            "topics": scenario.topic.pk,
            "assessor": scenario.assessor.pk,
            "condition": "support_postedit",
            "llm_method": "",
        },
    )
    assert response.status_code == 302
    postedit = AssessorWork.objects.get(kind=support_kinds.SUPPORT_POSTEDIT)
    # A topic's human work belongs to one assessor: another one is refused, and nothing is given.
    other = make_user(Role.ASSESSOR)
    refused = organizer.post(
        reverse("support:organize"),
        {"topics": scenario.topic.pk, "assessor": other.pk, "condition": "support_scratch", "llm_method": ""},
    )
    assert refused.status_code == 400 and "Nothing was given" in refused.content.decode()
    unknown = organizer.post(reverse("judge:organize"), {"topics": "nope", "assessor": scenario.assessor.pk})
    assert unknown.status_code == 400 and "Unknown topic(s): nope" in unknown.content.decode()

    assessor = client_for(scenario.assessor)
    for sentence in (0,):
        assessor.post(
            reverse("support:label", args=[postedit.pk, 1]),
            {"sentence": sentence, "label": "0", "previous": "", "version": 0},
            HTTP_ACCEPT="application/json",
        )
    label = SupportLabel.objects.get(method="postedit")
    assert label.changed is True
    page = organizer.get(reverse("support:organize")).content.decode()
    assert "100% (1/1)" in page
    page = organizer.get(reverse("judge:organize")).content.decode()
    assert "0 / 9" in page

    # Submit (every label) and reopen.
    assign_client_url = lambda n: reverse("judge:label", args=[work.pk, n])  # noqa: E731
    for number in (1, 2, 3):
        for nugget in scenario.nuggets:
            fields = {"nugget": nugget.pk, "label": "support", "previous": "", "version": 0}
            assessor.post(assign_client_url(number), fields)
    assert assessor.post(reverse("judge:submit", args=[work.pk]), {"version": 0}).status_code == 302
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    organizer.post(reverse("judge:reopen", args=[work.pk]), {"reason": "recheck answer 2"})
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.IN_PROGRESS
    event = WorkEvent.objects.filter(work=work, action="reopened").get()
    assert event.detail["reason"] == "recheck answer 2" and event.user == scenario.organizer


def test_totals_per_assessor_are_summed_by_hand():
    from types import SimpleNamespace

    from assessor.work.judging import assessor_totals

    def row(name, status, done, total, seconds, shown=0, changed=0):
        work = SimpleNamespace(assessor=name, status=status)
        return SimpleNamespace(work=work, done=done, total=total, seconds=seconds, shown=shown, changed=changed)

    rows = [
        row("bea", "submitted", 10, 10, 100.0, 4, 1),
        row("al", "in_progress", 3, 12, 30.0),
        row("bea", "in_progress", 2, 8, 20.0, 4, 3),
    ]
    al, bea = assessor_totals(rows)
    assert (al.assessor, al.topics, al.submitted, al.done, al.total, al.seconds) == ("al", 1, 0, 3, 12, 30.0)
    assert (bea.topics, bea.submitted, bea.done, bea.total, bea.seconds) == (2, 1, 12, 18, 120.0)
    assert bea.change_rate == 4 / 8 and al.change_rate is None


def test_a_topic_without_answers_sends_the_assessor_home_with_a_note(scenario):
    empty = make_topic()
    NuggetSet.objects.create(
        topic=empty,
        kind="manual",
        name="manual",
        source=source_of("nuggets", "manual", kind="person"),
        created_by=scenario.assessor,
    )
    assign = assign_work_give(topic=empty, assessor=scenario.assessor, by=scenario.organizer)
    support = support_work_give(topic=empty, assessor=scenario.assessor, kind="support_scratch", by=scenario.organizer)
    client = client_for(scenario.assessor)
    for url in (reverse("judge:assign", args=[assign.pk]), reverse("support:judge", args=[support.pk])):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"] == reverse("home")


def test_organizer_sees_time_per_answer_and_per_pair_with_runs(scenario):
    assign = give_assign(scenario)
    postedit = give_support(scenario, support_kinds.SUPPORT_POSTEDIT)
    assessor = client_for(scenario.assessor)
    fields = {"nugget": scenario.nuggets[0].pk, "label": "support", "previous": "", "version": 0}
    assessor.post(reverse("judge:label", args=[assign.pk, 2]), fields)
    AssignmentLabel.objects.filter(assigner="manual").update(seconds_spent=75)
    assessor.post(reverse("support:label", args=[postedit.pk, 1]), {"sentence": 0, "label": "2", "version": 0})
    SupportLabel.objects.filter(method="postedit").update(seconds_spent=12.5)
    organizer = client_for(scenario.organizer)
    page = organizer.get(reverse("judge:organize_work", args=[assign.pk])).content.decode()
    assert "1 min 15 s" in page and all(run in page for run in ("SECRETRUN-alpha", "SECRETRUN-beta"))
    page = organizer.get(reverse("support:organize_work", args=[postedit.pk])).content.decode()
    assert "12.5 s" in page and "changed" in page and "PS" in page and "FS" in page
    assert client_for(scenario.assessor).get(reverse("support:organize_work", args=[postedit.pk])).status_code == 403


def test_a_replayed_save_is_applied_once_and_answered_as_the_first_time(scenario):
    """The script retries a save whose answer it lost with the same op_id: nothing is written twice."""
    assign = give_assign(scenario)
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    assessor = client_for(scenario.assessor)
    nugget = scenario.nuggets[0]
    assign_url = reverse("judge:label", args=[assign.pk, 1])
    first = {"nugget": nugget.pk, "label": "support", "previous": "", "version": 0, "op_id": "op-assign-1"}
    support_url = reverse("support:label", args=[support.pk, 1])
    support_first = {"sentence": 0, "label": "2", "previous": "", "version": 0, "op_id": "op-support-1"}
    for url, fields, answered in ((assign_url, first, "support"), (support_url, support_first, 2)):
        response = assessor.post(url, fields, HTTP_ACCEPT="application/json")
        assert response.status_code == 200 and response.json()["label"] == answered
        assert response.json()["status"] == "in progress"
    # Another tab changes both labels after the first saves, without an op id.
    changed = {**first, "label": "not_support", "previous": "support", "op_id": ""}
    assert assessor.post(assign_url, changed, HTTP_ACCEPT="application/json").status_code == 200
    support_changed = {**support_first, "label": "0", "previous": "2", "op_id": ""}
    assert assessor.post(support_url, support_changed, HTTP_ACCEPT="application/json").status_code == 200
    # The lost answers' retries: the same answer as the first time, and the later labels stay.
    for url, fields, answered in ((assign_url, first, "support"), (support_url, support_first, 2)):
        replay = assessor.post(url, fields, HTTP_ACCEPT="application/json")
        assert replay.status_code == 200 and replay.json()["label"] == answered
    assert AssignmentLabel.objects.get(nugget=nugget, assigner="manual").label == "not_support"
    assert SupportLabel.objects.get(method="scratch").label == 0
    # A new operation with a stale "previous" is still refused as a conflict.
    stale = {**first, "op_id": "op-assign-2"}
    conflict = assessor.post(assign_url, stale, HTTP_ACCEPT="application/json")
    assert conflict.status_code == 409 and conflict.json()["current"] == "not_support"
