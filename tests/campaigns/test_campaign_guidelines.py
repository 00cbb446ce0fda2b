"""A campaign's guidelines (`campaign add --guidelines FILE`) where people need them: collapsed on the assessor's
queue under each campaign, on every work page (the work's campaign's), on the organizer's home of the campaign, and
counted by `campaign show`. The text is escaped, its paragraphs kept; a campaign without guidelines shows none.
"""

import re
from dataclasses import dataclass
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessor.campaigns.access import member_add
from assessor.campaigns.services import campaign_create
from assessor.models import AssessorWork, Campaign
from assessor.models.keys import topic_key
from assessor.models.scope import campaign_first, campaign_scope
from assessor.work.roles import Role
from preferences.kinds import PREFERENCE_WORK
from support import kinds as support_kinds
from support.kinds import SUPPORT_SCRATCH
from tests.builders import make_topic, make_user
from tests.scenarios import give_assign, give_support, make_given_topic, make_scenario

pytestmark = pytest.mark.django_db

MAIN_GUIDELINES = "Judge the answer, not the run.\n\nA <script>alert(1)</script> is text & stays text.\nSecond line."
KIDDIE_GUIDELINES = "Kiddie reports: read the request first."


def set_guidelines(campaign: Campaign, text: str) -> Campaign:
    Campaign.objects.filter(pk=campaign.pk).update(guidelines=text)
    campaign.refresh_from_db()
    return campaign


def page_as(user: User, url: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(url, follow=True)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def guideline_blocks(html: str) -> list[tuple[str, str, str]]:
    """Each guidelines block of the page: (its campaign's slug, its summary, its text as the page holds it)."""
    return re.findall(
        r'<details class="campaign-guidelines" data-campaign="([^"]+)">\s*<summary>([^<]*)</summary>\s*'
        r'<div class="campaign-guidelines-text">(.*?)</div>\s*</details>',
        html,
        re.S,
    )


MAIN_ESCAPED = (
    "<p>Judge the answer, not the run.</p>\n\n"
    "<p>A &lt;script&gt;alert(1)&lt;/script&gt; is text &amp; stays text.<br>Second line.</p>"
)


# --- the assessor's queue -----------------------------------------------------------------------


@dataclass
class Queue:
    main: Campaign
    kiddie: Campaign
    assessor: User


@pytest.fixture
def queue(db) -> Queue:
    """The assessor's queue holds a work of main (with guidelines) and one of kiddie (none yet)."""
    main = set_guidelines(campaign_first(), MAIN_GUIDELINES)
    kiddie = campaign_create(slug="kiddie", title="Rag4Reports kiddie", families=["reports"])
    assessor = make_user(Role.ASSESSOR, username="pat")
    for campaign in (main, kiddie):
        member_add(campaign, assessor)
    with campaign_scope(main):
        AssessorWork.objects.create(topic=make_topic("300"), assessor=assessor, kind=SUPPORT_SCRATCH)
    with campaign_scope(kiddie):
        topic = make_topic(topic_key("300", kiddie))
        AssessorWork.objects.create(topic=topic, assessor=assessor, kind=PREFERENCE_WORK)
    return Queue(main=main, kiddie=kiddie, assessor=assessor)


def section(html: str, slug: str) -> str:
    found = re.search(rf'<section class="queue-campaign" data-campaign="{slug}">(.*?)</section>', html, re.S)
    assert found, f"the queue has no section of {slug}"
    return found.group(1)


def test_the_queue_shows_a_campaigns_guidelines_collapsed_under_its_heading_and_escaped(queue):
    html = page_as(queue.assessor, "/")
    main = section(html, "main")
    assert guideline_blocks(main) == [("main", "Guidelines", MAIN_ESCAPED)]
    # Under the heading, above the table; collapsed.
    assert main.index("<h2>") < main.index("campaign-guidelines") < main.index("<table")
    assert "<details open" not in html
    assert "<script>alert(1)</script>" not in html
    # A campaign without guidelines has no block.
    assert guideline_blocks(section(html, "kiddie")) == []


def test_each_campaign_of_the_queue_shows_its_own_guidelines(queue):
    set_guidelines(queue.kiddie, KIDDIE_GUIDELINES)
    html = page_as(queue.assessor, "/")
    assert [slug for slug, _, _ in guideline_blocks(html)] == ["main", "kiddie"]
    assert guideline_blocks(section(html, "kiddie")) == [("kiddie", "Guidelines", f"<p>{KIDDIE_GUIDELINES}</p>")]


def test_a_queue_of_one_campaign_shows_its_guidelines_once_above_the_list(queue):
    AssessorWork.objects.unscoped().filter(topic__campaign=queue.kiddie).delete()
    html = page_as(queue.assessor, "/")
    assert "<h2>" not in section(html, "main")
    assert guideline_blocks(html) == [("main", "Guidelines", MAIN_ESCAPED)]
    assert html.index("campaign-guidelines") < html.index('id="work-queue"')


def test_a_queue_without_guidelines_shows_no_block(queue):
    set_guidelines(queue.main, "")
    assert "campaign-guidelines" not in page_as(queue.assessor, "/")


# --- the work pages -----------------------------------------------------------------------------


@dataclass
class Works:
    main: Campaign
    other: Campaign
    assessor: User
    main_assign: AssessorWork
    main_nuggets: AssessorWork
    other_support: AssessorWork


@pytest.fixture
def works(db) -> Works:
    """One assessor with a ManualAssign and a nugget list in main, and support judging in "other"; both campaigns
    have guidelines."""
    main = set_guidelines(campaign_first(), MAIN_GUIDELINES)
    other = campaign_create(slug="other", title="Other <Campaign>", guidelines=KIDDIE_GUIDELINES)
    with campaign_scope(main):
        scenario = make_scenario(plant_llm=False)
        main_assign = give_assign(scenario)
        main_nuggets = make_given_topic(condition="manual", assessor=scenario.assessor, organizer=scenario.organizer)
    with campaign_scope(other):
        elsewhere = make_scenario(plant_llm=False, topic_id=topic_key("300", other))
        elsewhere.assessor = scenario.assessor
        other_support = give_support(elsewhere, support_kinds.SUPPORT_SCRATCH)
    return Works(main, other, scenario.assessor, main_assign, main_nuggets, other_support)


def test_a_work_page_shows_its_campaigns_guidelines_near_the_top(works):
    html = page_as(works.assessor, reverse("judge:assign", args=[works.main_assign.pk]))
    assert guideline_blocks(html) == [("main", "Guidelines of Main campaign", MAIN_ESCAPED)]
    # Below the page's heading, above the judging bar; the protocol's guidelines stay in the help dialog.
    assert html.index('class="ws-title"') < html.index("campaign-guidelines") < html.index('id="judge-sticky"')
    assert '<section id="guidelines"' in html


def test_the_nugget_workspace_shows_its_campaigns_guidelines(works):
    html = page_as(works.assessor, reverse("nuggets:work", args=[works.main_nuggets.pk]))
    assert guideline_blocks(html) == [("main", "Guidelines of Main campaign", MAIN_ESCAPED)]


def test_a_work_page_of_another_campaign_shows_that_campaigns_guidelines_not_the_first_ones(works):
    html = page_as(works.assessor, reverse("support:judge", args=[works.other_support.pk]))
    assert guideline_blocks(html) == [("other", "Guidelines of Other &lt;Campaign&gt;", f"<p>{KIDDIE_GUIDELINES}</p>")]
    assert "Judge the answer, not the run." not in html


def test_a_work_page_of_a_campaign_without_guidelines_shows_no_block(works):
    set_guidelines(works.main, "")
    html = page_as(works.assessor, reverse("judge:assign", args=[works.main_assign.pk]))
    assert "campaign-guidelines" not in html


def test_the_guidelines_cost_a_work_page_no_query_of_their_own(works):
    """The campaign comes with the work's read (assessor.work.access.assessor_work): no page reads it alone."""
    client = Client()
    client.force_login(works.assessor)
    for work, start in (
        (works.main_assign, "judge:assign"),
        (works.main_nuggets, "nuggets:work"),
        (works.other_support, "support:judge"),
    ):
        first = client.get(reverse(start, args=[work.pk]), follow=True)
        page = first.redirect_chain[-1][0] if first.redirect_chain else reverse(start, args=[work.pk])
        with CaptureQueriesContext(connection) as captured:
            response = client.get(page)
        assert response.status_code == 200 and "campaign-guidelines" in response.content.decode()
        alone = [query["sql"] for query in captured if query["sql"].startswith('SELECT "assessor_campaign".')]
        assert alone == [], (page, alone)


# --- the organizer's side -----------------------------------------------------------------------


def test_the_campaigns_organizer_home_shows_its_guidelines_collapsed(db):
    other = campaign_create(slug="other", title="Other", guidelines="Organizers: <b>read</b> this.")
    organizer = make_user(Role.ORGANIZER)
    member_add(other, organizer)
    member_add(campaign_first(), organizer)
    html = page_as(organizer, "/c/other/")
    assert guideline_blocks(html) == [("other", "Guidelines", "<p>Organizers: &lt;b&gt;read&lt;/b&gt; this.</p>")]
    assert "campaign-guidelines" not in page_as(organizer, "/c/main/")


def test_campaign_show_says_whether_the_campaign_has_guidelines(db):
    set_guidelines(campaign_first(), MAIN_GUIDELINES)
    campaign_create(slug="other", title="Other")

    def shown(slug: str) -> list[str]:
        out = StringIO()
        call_command("campaign", "show", slug, stdout=out)
        return [line for line in out.getvalue().splitlines() if line.startswith("guidelines:")]

    assert shown("main") == [f"guidelines:   {len(MAIN_GUIDELINES.split())} words"]
    assert shown("other") == ["guidelines:   none"]
