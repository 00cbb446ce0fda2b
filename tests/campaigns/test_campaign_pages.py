"""The shell's pages with two campaigns: the home's list with progress, the header's title and switcher, the menu,
launch list and topic page of a campaign's families, and the assessor's queue grouped by campaign (assessor.site).

Campaign "main" uses the rag family, "kiddie" the reports family. Organizer A belongs to main only, organizer B to
kiddie only, the assessor to both; the admin to none (an admin sees every campaign).
"""

import re
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from assessor.campaigns.services import campaign_create
from assessor.models import Answer, AssessorWork, Campaign, CampaignMember, Job, Run, Topic
from assessor.models.keys import topic_key
from assessor.models.scope import campaign_first, campaign_scope
from assessor.registry import AnswerPanel, NavLink, Registry, RunPanel, app_registering, register_nav_link, registry
from assessor.work.roles import Role
from preferences.kinds import PREFERENCE_WORK
from support.kinds import SUPPORT_POSTEDIT, SUPPORT_SCRATCH
from tests.builders import make_answer, make_qrel, make_run, make_segment, make_topic, make_user

pytestmark = pytest.mark.django_db

TOPICS = reverse("collection:topics")


@dataclass
class Two:
    main: Campaign
    kiddie: Campaign
    organizer_a: User
    organizer_b: User
    assessor: User
    admin: User
    main_works: list[AssessorWork]
    kiddie_work: AssessorWork


def _member(user: User, *campaigns: Campaign) -> User:
    for campaign in campaigns:
        CampaignMember.objects.get_or_create(campaign=campaign, user=user)
    return user


@pytest.fixture
def two(db) -> Two:
    """Main: topic 300, one run answering it, two works of the assessor (one submitted). Kiddie: topic 300 and
    topic bee, one work of the assessor, one queued job."""
    main = campaign_first()
    Campaign.objects.filter(pk=main.pk).update(title="TREC 2024 RAG", families=["rag"])
    main.refresh_from_db()
    kiddie = campaign_create(slug="kiddie", title="Rag4Reports kiddie", families=["reports"])
    assessor = _member(make_user(Role.ASSESSOR, username="pat"), main, kiddie)
    with campaign_scope(main):
        topic = make_topic("300", query="how do bees make honey (TREC)")
        make_answer(make_run("baseline"), topic)
        main_works = [
            AssessorWork.objects.create(
                topic=topic, assessor=assessor, kind=SUPPORT_POSTEDIT, status=AssessorWork.Status.SUBMITTED
            ),
            AssessorWork.objects.create(topic=topic, assessor=assessor, kind=SUPPORT_SCRATCH),
        ]
    with campaign_scope(kiddie):
        kid_topic = make_topic(topic_key("300", kiddie), query="why do bees sting (kiddie)")
        make_topic(topic_key("bee", kiddie), query="bee honey making")
        kiddie_work = AssessorWork.objects.create(topic=kid_topic, assessor=assessor, kind=PREFERENCE_WORK)
        Job.objects.create(kind="preferences", output_name="llm-prefs", model="m")
        Job.objects.create(kind="preferences", output_name="done-prefs", model="m", status=Job.Status.DONE)
    return Two(
        main=main,
        kiddie=kiddie,
        organizer_a=_member(make_user(Role.ORGANIZER, username="alice"), main),
        organizer_b=_member(make_user(Role.ORGANIZER, username="bob"), kiddie),
        assessor=assessor,
        admin=make_user(Role.ADMIN, username="root"),
        main_works=main_works,
        kiddie_work=kiddie_work,
    )


def page_as(user: User, url: str, status: int = 200) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response.content.decode()


def home_rows(page: str) -> list[tuple[str, ...]]:
    """The home's campaigns table: (slug, link, title, topics, runs, work, open jobs) per row."""
    rows = re.findall(r'<tr data-campaign="([^"]+)">(.*?)</tr>', page, re.S)
    found = []
    for slug, row in rows:
        link, title = re.search(r'<a href="([^"]+)">([^<]+)</a>', row).groups()
        numbers = re.findall(r'<td class="num">([^<]+)</td>', row)
        found.append((slug, link, title, *numbers))
    return found


def switcher(page: str) -> list[tuple[str, str]]:
    """The switcher's campaigns: (slug, link), in their order."""
    menu = re.search(r'<div class="nav-menu campaign-menu">(.*?)</div>', page, re.S)
    assert menu, "the page has no campaign switcher"
    return [(slug, href) for href, slug in re.findall(r'<a href="([^"]+)" data-campaign="([^"]+)"', menu.group(1))]


def header_title(page: str) -> str:
    found = re.search(r'<span id="campaign-title">([^<]*)</span>', page)
    assert found, "the header names no campaign"
    return found.group(1)


def menu(page: str) -> list[str]:
    nav = re.search(r'<nav class="nav" aria-label="Main">(.*?)</nav>', page, re.S)
    assert nav
    return re.findall(r">([^<>]+)</a>", nav.group(1))


# --- the home page ------------------------------------------------------------------------------


def test_the_home_lists_the_campaigns_each_person_sees_with_their_progress(two):
    main_row = ("main", "/c/main/", "TREC 2024 RAG", "1", "1", "1 / 2", "0")
    kiddie_row = ("kiddie", "/c/kiddie/", "Rag4Reports kiddie", "2", "0", "0 / 1", "1")
    assert home_rows(page_as(two.organizer_a, "/")) == [main_row]
    assert home_rows(page_as(two.organizer_b, "/")) == [kiddie_row]
    assert home_rows(page_as(two.admin, "/")) == [main_row, kiddie_row]


def test_the_home_costs_the_same_queries_whatever_the_number_of_campaigns(two):
    def queries() -> int:
        client = Client()
        client.force_login(two.admin)
        client.get("/")
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/").status_code == 200
        return len(captured)

    before = queries()
    third = campaign_create(slug="third", title="Third")
    with campaign_scope(third):
        make_answer(make_run("baseline"), make_topic(topic_key("300", third)))
        Job.objects.create(kind="argue", output_name="x", model="m")
    assert len(home_rows(page_as(two.admin, "/"))) == 3
    assert queries() == before


def test_with_one_campaign_the_home_also_shows_its_destinations(db):
    organizer = make_user(Role.ORGANIZER)
    make_topic("2024-1")
    page = page_as(organizer, "/")
    assert home_rows(page) == [("main", "/c/main/", "Main campaign", "1", "0", "0 / 0", "0")]
    assert "1 topic, 0 runs, 0 answers." in page
    assert f'<a class="card" href="{TOPICS}">' in page
    assert header_title(page) == "Main campaign"


def test_a_campaigns_home_shows_its_size_and_the_destinations_of_its_families(two):
    with campaign_scope(two.kiddie):
        make_answer(make_run("baseline"), Topic.objects.get(pk=topic_key("300", two.kiddie)))
    assert "1 topic, 1 run, 1 answer." in page_as(two.organizer_a, "/c/main/")
    page = page_as(two.organizer_b, "/c/kiddie/")
    assert "<h1>Rag4Reports kiddie</h1>" in page
    assert "2 topics, 1 run, 1 answer." in page
    cards = re.findall(r'<a class="card" href="([^"]+)"><strong>([^<]+)</strong>', page)
    assert ("/c/kiddie" + TOPICS, "Topics") in cards
    assert ("/c/kiddie" + reverse("preferences:organize"), "Preferences") in cards
    assert "ManualAssign" not in [title for _, title in cards]


# --- the header ---------------------------------------------------------------------------------


def test_every_organizer_page_names_its_campaign_and_a_closed_one_says_so(two):
    assert header_title(page_as(two.organizer_a, "/c/main" + TOPICS)) == "TREC 2024 RAG"
    page = page_as(two.organizer_b, "/c/kiddie" + reverse("jobs:list"))
    assert header_title(page) == "Rag4Reports kiddie"
    assert 'class="badge closed"' not in page
    Campaign.objects.filter(pk=two.kiddie.pk).update(closed_at=timezone.now())
    page = page_as(two.organizer_b, "/c/kiddie" + reverse("jobs:list"))
    assert re.search(
        r'<span id="campaign-title">Rag4Reports kiddie</span> <span class="badge closed">closed</span>', page
    )


def test_with_one_campaign_the_header_still_names_it(db):
    organizer = make_user(Role.ORGANIZER)
    assert header_title(page_as(organizer, TOPICS)) == "Main campaign"


def test_the_switcher_lists_the_campaigns_the_person_sees_on_the_same_page(two):
    runs = reverse("collection:runs")
    assert switcher(page_as(two.organizer_a, "/c/main" + runs)) == [("main", "/c/main" + runs)]
    assert switcher(page_as(two.organizer_b, "/c/kiddie" + runs)) == [("kiddie", "/c/kiddie" + runs)]
    assert switcher(page_as(two.admin, "/c/main" + runs)) == [
        ("main", "/c/main" + runs),
        ("kiddie", "/c/kiddie" + runs),
    ]
    # A page of one row (a topic) has no namesake in another campaign: the switcher offers that campaign's home.
    topic_page = "/c/main" + reverse("collection:topic", args=["300"])
    assert switcher(page_as(two.admin, topic_page)) == [("main", topic_page), ("kiddie", "/c/kiddie/")]
    # The other campaign is not found by the organizer who does not belong to it.
    page_as(two.organizer_a, "/c/kiddie" + runs, status=404)


def test_the_switcher_marks_the_current_campaign_and_links_all_campaigns(two):
    page = page_as(two.admin, "/c/kiddie" + TOPICS)
    assert f'<a href="/c/kiddie{TOPICS}" data-campaign="kiddie" class="current" aria-current="page">' in page
    assert '<a class="all-campaigns" href="/">All campaigns</a>' in page


def test_an_assessor_has_no_switcher(two):
    page = page_as(two.assessor, "/")
    assert 'id="campaign-switch"' not in page


# --- families -----------------------------------------------------------------------------------


def test_a_family_the_campaign_does_not_use_is_absent_from_its_menu(two):
    rag = menu(page_as(two.admin, "/c/main" + TOPICS))
    reports = menu(page_as(two.admin, "/c/kiddie" + TOPICS))
    for everywhere in ("Topics", "Runs", "Leaderboards", "Upload", "Nugget work", "Jobs", "Meta-evaluation", "Admin"):
        assert everywhere in rag and everywhere in reports, everywhere
    for of_rag in ("ManualAssign", "Support judging"):
        assert of_rag in rag and of_rag not in reports, of_rag
    for of_reports in ("Preferences", "Grading", "ARGUE-style judging"):
        assert of_reports in reports and of_reports not in rag, of_reports


RAG_JOBS = {"auto_nuggets", "auto_assign", "auto_support", "umbrela"}
REPORT_JOBS = {"preferences", "prefnugget_bank", "query_bank", "question_grading", "crucible", "argue"}


def test_the_jobs_page_launches_only_the_kinds_of_the_campaigns_families(two):
    def launched(slug: str) -> set[str]:
        page = page_as(two.admin, f"/c/{slug}" + reverse("jobs:list"))
        return set(re.findall(rf'href="/c/{slug}/jobs/launch/([\w-]+)/"', page))

    # (The test settings' example app names no family: its kind shows in both.)
    assert RAG_JOBS <= launched("main") and not REPORT_JOBS & launched("main")
    assert REPORT_JOBS <= launched("kiddie") and not RAG_JOBS & launched("kiddie")


def test_the_topic_and_run_pages_show_the_sections_of_the_campaigns_families(two):
    from assessor.collection import selectors

    rag_topic = Topic.objects.unscoped().get(campaign=two.main, pk="300")
    report_topic = Topic.objects.unscoped().get(campaign=two.kiddie, pk=topic_key("300", two.kiddie))
    with campaign_scope(two.main):
        assert [panel.template for panel in selectors.topic_panels(topic=rag_topic)] == [
            "nuggets/topic_nugget_sets_panel.html",
        ]
    with campaign_scope(two.kiddie):
        assert [panel.template for panel in selectors.topic_panels(topic=report_topic)] == [
            "reports/topic_request_panel.html",
            "nuggets/topic_banks_panel.html",
        ]
    # The page, in the first campaign (its topics' keys are their ids): the nugget sets' section.
    assert 'id="nuggets"' in page_as(two.admin, "/c/main" + reverse("collection:topic", args=["300"]))


def test_a_topic_page_shows_relevant_segments_only_in_a_campaign_with_qrels(two):
    with campaign_scope(two.main):
        make_qrel(Topic.objects.get(pk="300"), make_segment(text="Bees make honey."), source="nist")
    rag = page_as(two.admin, "/c/main" + reverse("collection:topic", args=["300"]))
    assert 'id="segments"' in rag and "Relevant segments" in rag
    report = page_as(two.admin, "/c/kiddie" + reverse("collection:topic", args=["bee"]))
    assert "bee honey making" in report
    assert 'id="segments"' not in report and "Relevant segments" not in report


def test_a_job_kind_of_a_family_the_campaign_does_not_use_is_not_found_by_its_url(two):
    for kind in sorted(RAG_JOBS):
        page_as(two.admin, "/c/main" + reverse("jobs:launch", args=[kind]))
        page_as(two.admin, "/c/kiddie" + reverse("jobs:launch", args=[kind]), status=404)
    for kind in sorted(REPORT_JOBS):
        page_as(two.admin, "/c/kiddie" + reverse("jobs:launch", args=[kind]))
        page_as(two.admin, "/c/main" + reverse("jobs:launch", args=[kind]), status=404)


def topics_columns(page: str) -> list[str]:
    head = re.search(r"<thead>(.*?)</thead>", page, re.S)
    assert head, "the topics page has no table"
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<th[^>]*>(.*?)</th>", head.group(1), re.S)]


def test_the_topics_page_shows_the_columns_of_the_campaigns_families(two):
    rag_columns = ["Nugget sets", "Nugget conditions", "Support methods"]
    assert topics_columns(page_as(two.admin, "/c/main" + TOPICS)) == ["Topic", "Query", "Answers", *rag_columns]
    assert topics_columns(page_as(two.admin, "/c/kiddie" + TOPICS)) == ["Topic", "Query", "Answers"]


def test_the_answer_page_shows_the_sections_of_the_campaigns_families(two, monkeypatch):
    from assessor.collection.answer_page import answer_page

    panels = [
        AnswerPanel("Of rag", "of_rag.html", lambda answer: {}, 1, family="rag"),
        AnswerPanel("Of reports", "of_reports.html", lambda answer: {}, 2, family="reports"),
        AnswerPanel("Of the shell", "shell.html", lambda answer: {}, 3),
    ]
    monkeypatch.setattr(registry, "answer_panels", panels)
    with campaign_scope(two.kiddie):
        kiddie_answer = make_answer(make_run("baseline"), Topic.objects.get(pk=topic_key("bee", two.kiddie)))
        assert [(s.title, s.anchor) for s in answer_page(kiddie_answer).sections] == [
            ("Of reports", "panel-2"),
            ("Of the shell", "panel-3"),
        ]
    with campaign_scope(two.main):
        main_answer = Answer.objects.get(topic_id="300")
        assert [(s.title, s.anchor) for s in answer_page(main_answer).sections] == [
            ("Of rag", "panel-1"),
            ("Of the shell", "panel-3"),
        ]


def test_the_run_page_shows_the_sections_of_the_campaigns_families(two, monkeypatch):
    from assessor.collection import selectors

    assert {panel.family for panel in registry.run_panels} == {"reports"}  # Crucible's and ARGUE's
    panels = [
        RunPanel("of_reports.html", lambda run: {}, 1, family="reports"),
        RunPanel("shell.html", lambda run: {}, 2),
    ]
    monkeypatch.setattr(registry, "run_panels", panels)
    run = Run.objects.unscoped().get(run_id="baseline")
    with campaign_scope(two.main):
        assert [panel.template for panel in selectors.run_panels(run=run)] == ["shell.html"]
    with campaign_scope(two.kiddie):
        assert [panel.template for panel in selectors.run_panels(run=run)] == ["of_reports.html", "shell.html"]


def test_the_registry_gives_a_part_its_apps_family_unless_it_names_one():
    class Rag:
        def uses(self, family: str) -> bool:
            return family == "rag"

    own = Registry()
    with app_registering("reports"):
        stamped = [
            NavLink("A", "", "a", 1),
            NavLink("B", "", "b", 2, family="rag"),
            NavLink("C", "", "c", 3, family=""),
        ]
    parts = [NavLink("A", "", "a", 1, family="reports"), stamped[1], stamped[2], NavLink("D", "", "d", 4)]
    assert [link.title for link in own.used_in(Rag(), parts)] == ["B", "C", "D"]
    assert [link.title for link in own.used_in(None, parts)] == ["A", "B", "C", "D"]


def test_registering_inside_an_app_stamps_its_family(monkeypatch):
    monkeypatch.setattr(registry, "nav_links", [])
    with app_registering("reports"):
        register_nav_link(NavLink("Mine", "", "mine", 1))
        register_nav_link(NavLink("Both", "", "both", 2, family=""))
    register_nav_link(NavLink("Shell", "", "shell", 3))
    assert [(link.title, link.family) for link in registry.nav_links] == [
        ("Mine", "reports"),
        ("Both", ""),
        ("Shell", None),
    ]


def test_the_topics_columns_and_answer_sections_are_tagged_with_their_apps_family():
    assert {count.title: count.family for count in registry.topic_counts} == {
        "Nugget sets": "rag",
        "Nugget conditions": "rag",
        "Support methods": "rag",
    }
    families = {panel.title: panel.family for panel in registry.answer_panels}
    assert families["Nugget assignment"] == families["Support of the citations"] == "rag"
    assert families["Grades"] == families["Preferences"] == families["ARGUE-style judgments"] == "reports"


def test_each_app_declares_its_protocol_family():
    from django.apps import apps

    declared = {config.name: getattr(config, "protocol_family", None) for config in apps.get_app_configs()}
    assert {name: declared[name] for name in ("nuggets", "assignment", "support", "relevance")} == dict.fromkeys(
        ("nuggets", "assignment", "support", "relevance"), "rag"
    )
    for name in ("reports", "preferences", "prefnugget", "grades", "argue", "crucible"):
        assert declared[name] == "reports", name
    assert declared["assessor"] == "" and declared["metaeval"] == ""


# --- the assessor's queue -----------------------------------------------------------------------


def test_the_queue_groups_the_work_of_every_campaign_each_linking_inside_its_own(two):
    client = Client()
    client.force_login(two.assessor)
    for home in ("/", "/c/kiddie/"):  # the whole queue, whatever campaign the page is in
        page = client.get(home).content.decode()
        sections = re.findall(r'<section class="queue-campaign" data-campaign="([^"]+)">\s*<h2>([^<]+)</h2>', page)
        assert sections == [("main", "TREC 2024 RAG"), ("kiddie", "Rag4Reports kiddie")]
        rows = re.findall(r'<tr data-work="(\d+)">.*?<a href="([^"]+)">', page, re.S)
        open_main, submitted_main = two.main_works[1], two.main_works[0]
        assert [int(work) for work, _ in rows] == [open_main.pk, submitted_main.pk, two.kiddie_work.pk]
        links = dict((int(work), href) for work, href in rows)
        assert links[open_main.pk] == "/c/main" + reverse("support:judge", args=[open_main.pk])
        assert links[two.kiddie_work.pk] == "/c/kiddie" + reverse("preferences:judge", args=[two.kiddie_work.pk])
        # Both topics are "300": the page shows the id the files give, not the stored key.
        assert re.findall(r'<td class="mono">([^<]+)</td>', page) == ["300", "300", "300"]
    for href in links.values():
        assert client.get(href).status_code in (200, 302), href


def test_a_queue_of_one_campaign_has_no_headings_and_plain_links(two):
    AssessorWork.objects.unscoped().filter(pk=two.kiddie_work.pk).delete()
    page = page_as(two.assessor, "/")
    assert "<h2>" not in page
    assert 'id="work-queue"' in page
    assert f'href="{reverse("support:judge", args=[two.main_works[1].pk])}"' in page
