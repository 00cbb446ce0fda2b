"""Login, the home page of each role, and who may open which page."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from assessor.models import AssessorWork
from assessor.work.roles import Role
from assignment import kinds as assignment_kinds
from nuggets import kinds as nugget_kinds
from support import kinds as support_kinds
from tests.builders import make_answer, make_nugget_set, make_qrel, make_run, make_segment, make_topic, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def collection():
    """One topic, one run, one answer, one qrels source: enough for every organizer URL to exist."""
    topic = make_topic("2024-1", query="what is a nugget")
    segment = make_segment("doc_00_1#0_0")
    make_qrel(topic, segment, grade=2, source="nist")
    run = make_run("run.a")
    make_answer(run, topic)
    return topic, run


def organizer_urls() -> list[str]:
    return [
        reverse("collection:topics"),
        reverse("collection:topic", args=["2024-1"]),
        reverse("collection:runs"),
        reverse("collection:run", args=["run.a"]),
        reverse("collection:leaderboards"),
        reverse("collection:support_leaderboard"),
        reverse("assignment:leaderboard"),
        reverse("collection:upload"),
        reverse("collection:download_qrels", args=["nist"]),
        reverse("collection:download_nuggets", args=["auto_edit"]),
        reverse("collection:download_assignments", args=["auto_edit", "manual"]),
        reverse("collection:download_scores", args=["auto_edit", "manual"]),
        reverse("collection:download_support", args=["scratch"]),
        reverse("collection:download_support_scores", args=["scratch"]),
    ]


def test_the_login_page_logs_a_user_in_and_goes_home(client):
    make_user(Role.ORGANIZER, username="olga", password="secret-pw")
    page = client.get(reverse("login"))
    assert page.status_code == 200
    assert b'name="username"' in page.content and b'name="password"' in page.content

    response = client.post(reverse("login"), {"username": "olga", "password": "secret-pw"})
    assert response.status_code == 302
    assert response["Location"] == reverse("home")


def test_a_wrong_password_is_refused_on_the_page(client):
    make_user(Role.ORGANIZER, username="olga", password="secret-pw")
    response = client.post(reverse("login"), {"username": "olga", "password": "wrong"})
    assert response.status_code == 200
    assert b"enter a correct username and password" in response.content
    assert "_auth_user_id" not in client.session


def test_logout_is_a_post_form_in_the_layout(client):
    client.force_login(make_user(Role.ORGANIZER))
    page = client.get(reverse("home")).content.decode()
    assert f'<form method="post" action="{reverse("logout")}">' in page
    assert client.post(reverse("logout")).status_code == 302
    assert "_auth_user_id" not in client.session


def test_anonymous_home_goes_to_login(client):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("role", [Role.ORGANIZER, Role.ADMIN])
def test_the_organizer_home_links_the_organizer_pages(client, role):
    client.force_login(make_user(role))
    page = client.get(reverse("home")).content.decode()
    for name in ("collection:topics", "collection:runs", "collection:leaderboards", "collection:upload", "admin:index"):
        assert f'href="{reverse(name)}"' in page


def test_the_assessor_home_lists_their_own_work(client):
    assessor = make_user(Role.ASSESSOR, username="ann")
    other = make_user(Role.ASSESSOR, username="bob")
    mine = make_topic("2024-10", query="how do bees see colour")
    theirs = make_topic("2024-11", query="a topic of someone else")
    make_nugget_set(mine, texts=["Bees see ultraviolet"], kind="manual", name="manual")  # submitted: not waiting
    AssessorWork.objects.create(
        topic=mine, assessor=assessor, kind=assignment_kinds.ASSIGN_MANUAL, active_seconds=600,
        status=AssessorWork.Status.IN_PROGRESS, nugget_set_name="manual",
    )
    AssessorWork.objects.create(topic=theirs, assessor=other, kind=nugget_kinds.NUGGETS_MANUAL)
    client.force_login(assessor)

    page = client.get(reverse("home")).content.decode()

    assert "how do bees see colour" in page
    assert "ManualAssign" in page
    assert "in progress" in page
    assert "10 min" in page
    assert "a topic of someone else" not in page
    # Each kind of work links to the page where it is done, by the work's id.
    assign_work = AssessorWork.objects.get(topic=mine, kind=assignment_kinds.ASSIGN_MANUAL)
    nugget_work = AssessorWork.objects.create(topic=mine, assessor=assessor, kind=nugget_kinds.NUGGETS_MANUAL)
    support_work = AssessorWork.objects.create(topic=mine, assessor=assessor, kind=support_kinds.SUPPORT_SCRATCH)
    page = client.get(reverse("home")).content.decode()
    assert f'href="/nuggets/work/{nugget_work.pk}/"' in page
    assert f'href="{reverse("judge:assign", args=[assign_work.pk])}"' in page
    assert f'href="{reverse("support:judge", args=[support_work.pk])}"' in page
    assert "page not available yet" not in page
    # An assessor's layout has no organizer links.
    assert reverse("collection:topics") not in page
    assert reverse("admin:index") not in page


def test_a_user_without_a_role_sees_a_plain_home(client):
    client.force_login(User.objects.create_user("nobody", password="pw-for-tests"))
    page = client.get(reverse("home")).content.decode()
    assert "no role yet" in page


def test_an_assessor_gets_403_on_every_organizer_page(client, collection):
    client.force_login(make_user(Role.ASSESSOR))
    for url in organizer_urls():
        assert client.get(url).status_code == 403, url
    assert client.post(reverse("collection:upload"), {"kind": "topics"}).status_code == 403


def test_anonymous_is_sent_to_login_from_every_organizer_page(client, collection):
    for url in organizer_urls():
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login") + "?next="), url


@pytest.mark.parametrize("role", [Role.ORGANIZER, Role.ADMIN])
def test_organizers_and_admins_open_the_organizer_pages(client, collection, role):
    client.force_login(make_user(role))
    for url in organizer_urls():
        if "/download/" in url:
            continue  # downloads are tested with their contents in test_pages
        assert client.get(url).status_code == 200, url


@pytest.mark.django_db
def test_migrate_gives_organizers_the_permissions_of_every_app():
    # The test database was built by migrate; no roles_ensure() call here.
    from django.contrib.auth.models import Group

    organizer = Group.objects.get(name="organizer")
    codenames = set(organizer.permissions.values_list("content_type__app_label", "codename"))
    for app_label, model in [
        ("assessor", "topic"),
        ("nuggets", "nugget"),
        ("assignment", "assignmentlabel"),
        ("support", "supportlabel"),
        ("metaeval", "scoretable"),
    ]:
        assert (app_label, f"view_{model}") in codenames
        assert (app_label, f"delete_{model}") not in codenames
