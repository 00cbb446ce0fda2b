"""Injection: text from files and people is printed escaped, forms need their CSRF token, and no link makes
the site redirect to another one."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from assessor.models import Answer, LabelSource, Sentence, Topic
from assessor.work.roles import Role
from assignment.kinds import LABEL_FAMILY as ASSIGNMENT_FAMILY
from assignment.models import AssignmentLabel
from nuggets.models import Nugget
from tests.builders import make_user, source_of
from tests.scenarios import give_assign

pytestmark = pytest.mark.django_db

SCRIPT = '<script>alert("topic")</script>'
ATTRIBUTE = '"><img src=x onerror=alert(1)>'
NUGGET = "<b onmouseover=alert(2)>capital</b>"


@pytest.fixture
def planted(scenario):
    """The scenario's topic, answers and a nugget carrying markup, as a hostile file or person could write them."""
    Topic.objects.filter(pk=scenario.topic.pk).update(query=SCRIPT)
    Sentence.objects.filter(answer__topic=scenario.topic, index=0).update(text=ATTRIBUTE)
    Answer.objects.filter(topic=scenario.topic).update(text=ATTRIBUTE)
    Nugget.objects.filter(pk=scenario.nuggets[0].pk).update(text=NUGGET)
    return scenario


def assert_escaped(html: str) -> None:
    for payload in (SCRIPT, ATTRIBUTE, NUGGET):
        assert payload not in html
    assert "<script>alert" not in html and "<img src=x" not in html and "<b onmouseover" not in html


def page(user: User, path: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200, path
    return response.content.decode()


def test_markup_in_topics_answers_and_nuggets_is_printed_as_text(planted):
    work = give_assign(planted)
    judge = page(planted.assessor, reverse("judge:answer", args=[work.pk, 1]))
    assert_escaped(judge)
    assert "&lt;script&gt;alert(&quot;topic&quot;)&lt;/script&gt;" in judge
    assert "&lt;b onmouseover=alert(2)&gt;capital&lt;/b&gt;" in judge
    topic = page(planted.organizer, reverse("collection:topic", args=[planted.topic.pk]))
    assert_escaped(topic)
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in topic
    for path in (reverse("collection:topics"), reverse("collection:run", args=[planted.answers[0].run.run_id])):
        assert_escaped(page(planted.organizer, path))


def test_a_post_without_its_csrf_token_is_refused_and_changes_nothing(scenario):
    work = give_assign(scenario)
    client = Client(enforce_csrf_checks=True)
    client.force_login(scenario.assessor)
    label = {"version": work.version, "answer": scenario.answers[0].pk, "nugget": scenario.nuggets[0].pk,
             "previous": "", "label": "support", "op_id": "0b7f4c1e-5b7a-4a53-9c1e-1d2f3a4b5c6d"}  # fmt: skip
    assert client.post(reverse("judge:label", args=[work.pk, 1]), label).status_code == 403
    assert not AssignmentLabel.objects.filter(assigner_kind=AssignmentLabel.AssignerKind.MANUAL).exists()
    organizer = Client(enforce_csrf_checks=True)
    organizer.force_login(scenario.organizer)
    assert organizer.post(reverse("collection:upload"), {"kind": "topics"}).status_code == 403
    assert Client(enforce_csrf_checks=True).post(reverse("login"), {"username": "x", "password": "y"}).status_code == 403


@pytest.mark.parametrize("elsewhere", ["https://elsewhere.example/", "//elsewhere.example/x", "https:/\\elsewhere.example"])
def test_no_link_sends_a_user_off_the_site(client, elsewhere):
    make_user(Role.ORGANIZER, username="olga", password="secret-pw")
    source_of(ASSIGNMENT_FAMILY, "nobody", LabelSource.Kind.LLM)  # an assigner with no job to re-run: refused
    login = client.post(f"{reverse('login')}?next={elsewhere}", {"username": "olga", "password": "secret-pw"})
    assert login.status_code == 302 and login["Location"] == reverse("home")
    # A refused re-run goes back to the page it came from, only when that page is the site's own.
    refused = client.post(reverse("assignment:rerun_stale", args=["nobody"]), HTTP_REFERER=elsewhere)
    assert refused.status_code == 302 and refused["Location"] == reverse("assignment:leaderboard")
    own = client.post(reverse("assignment:rerun_stale", args=["nobody"]), HTTP_REFERER="/collection/runs/")
    assert own["Location"] == "/collection/runs/"
