"""Two campaigns in Chromium: two organizers each see only their own (its title in the header, the other's pages not
found), and an assessor of both works through one queue, opening a work of each campaign from it."""

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from assessor.campaigns.services import campaign_create
from assessor.models import AssessorWork, Campaign, CampaignMember
from assessor.models.keys import topic_key
from assessor.models.scope import campaign_scope
from assessor.work.roles import Role
from nuggets.giving import nugget_work_give
from nuggets.models import NuggetSet
from tests.builders import make_topic, make_user
from tests.scenarios import make_relevant_segments

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TREC_TITLE = "TREC 2024 RAG (demo)"
KIDDIE_TITLE = "Rag4Reports kiddie"


@dataclass
class Two:
    trec: Campaign
    kiddie: Campaign
    olga: User  # organizer of trec
    otto: User  # organizer of kiddie
    pat: User  # assessor of both
    trec_work: AssessorWork
    kiddie_work: AssessorWork


def _member(user: User, *campaigns: Campaign) -> User:
    for campaign in campaigns:
        CampaignMember.objects.get_or_create(campaign=campaign, user=user)
    return user


def _given(campaign: Campaign, *, assessor: User, by: User, query: str, bank: bool) -> AssessorWork:
    """Topic 300 of the campaign with relevant segments, given to the assessor: a nugget list, or a question bank."""
    with campaign_scope(campaign):
        topic = make_topic(topic_key("300", campaign), query=query)
        make_relevant_segments(topic, [2, 1])
        form = NuggetSet.Form.QUESTIONS if bank else NuggetSet.Form.FACTS
        return nugget_work_give(topic=topic, assessor=assessor, condition="manual", by=by, form=form)


@pytest.fixture
def two(db) -> Two:
    trec = campaign_create(slug="trec", title=TREC_TITLE, families=["rag"])
    kiddie = campaign_create(slug="kiddie", title=KIDDIE_TITLE, families=["reports"])
    olga = _member(make_user(Role.ORGANIZER, username="olga"), trec)
    otto = _member(make_user(Role.ORGANIZER, username="otto"), kiddie)
    pat = _member(make_user(Role.ASSESSOR, username="pat"), trec, kiddie)
    return Two(
        trec=trec,
        kiddie=kiddie,
        olga=olga,
        otto=otto,
        pat=pat,
        trec_work=_given(trec, assessor=pat, by=olga, query="how do bees make honey", bank=False),
        kiddie_work=_given(kiddie, assessor=pat, by=otto, query="why do bees sting", bank=True),
    )


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("SCREENSHOT_DIR", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_two_organizers_each_see_only_their_campaign(open_as, live_server, two, tmp_path):
    folder = shots(tmp_path)
    for organizer, own, title, other in (
        (two.olga, two.trec, TREC_TITLE, two.kiddie),
        (two.otto, two.kiddie, KIDDIE_TITLE, two.trec),
    ):
        page = open_as(organizer, "/")
        page.set_viewport_size({"width": 1366, "height": 800})
        # The home lists their campaign only, with its progress (one topic, no run, no work submitted of one).
        rows = page.locator("#campaigns tbody tr")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-campaign", own.slug)
        expect(rows.first.locator("td")).to_have_text([title, "1", "0", "0 / 1", "0"])
        page.screenshot(path=str(folder / f"campaigns-home-{organizer.username}.png"))
        rows.first.get_by_role("link", name=title).click()
        expect(page).to_have_url(f"{live_server.url}/c/{own.slug}/")
        # The header names the campaign, on the first screen; its switcher lists no other.
        expect(page.locator("#campaign-title")).to_have_text(title)
        expect(page.locator("#campaign-title")).to_be_in_viewport()
        page.locator("#campaign-switch summary").click()
        expect(page.locator("#campaign-switch .campaign-menu a[data-campaign]")).to_have_text([title])
        page.screenshot(path=str(folder / f"campaigns-header-{organizer.username}.png"))
        # Every organizer page stays in the campaign and names it.
        page.locator("nav.nav a", has_text="Topics").click()
        expect(page).to_have_url(f"{live_server.url}/c/{own.slug}/collection/topics/")
        expect(page.locator("#campaign-title")).to_have_text(title)
        expect(page.locator("table tbody tr")).to_have_count(1)
        # The other campaign's pages are not found.
        for path in (f"/c/{other.slug}/", f"/c/{other.slug}/collection/topics/"):
            response = page.goto(live_server.url + path)
            assert response is not None and response.status == 404, path
            expect(page.locator("body")).not_to_contain_text(other.title)


def test_the_menu_holds_the_campaigns_families_and_the_switcher_keeps_the_page(open_as, live_server, two, tmp_path):
    admin = make_user(Role.ADMIN, username="root")
    page = open_as(admin, "/c/trec/jobs/")
    page.set_viewport_size({"width": 1366, "height": 800})
    group = page.locator("nav.nav details.nav-group")
    group.locator("summary").click()
    expect(group.locator(".nav-menu a")).to_have_text(["Nugget work", "ManualAssign", "Support judging"])
    page.locator("#campaign-switch summary").click()
    choices = page.locator("#campaign-switch .campaign-menu a[data-campaign]")
    expect(choices).to_have_text([TREC_TITLE, KIDDIE_TITLE])
    for index in range(2):
        expect(choices.nth(index)).to_be_in_viewport()
    page.screenshot(path=str(shots(tmp_path) / "campaigns-switcher-admin.png"))
    choices.nth(1).click()
    expect(page).to_have_url(f"{live_server.url}/c/kiddie/jobs/")
    expect(page.locator("#campaign-title")).to_have_text(KIDDIE_TITLE)
    group.locator("summary").click()
    expect(group.locator(".nav-menu a")).to_have_text(["Nugget work", "Preferences", "Grading", "ARGUE-style judging"])
    # Every destination still on one row at 1366 px, the campaign's switcher beside them.
    entries = page.locator("nav.nav > a, nav.nav > details > summary")
    assert len({round(box["y"]) for box in (entry.bounding_box() for entry in entries.all()) if box}) == 1


def test_an_assessor_of_both_campaigns_works_through_one_queue(open_as, live_server, two, tmp_path):
    page = open_as(two.pat, "/")
    page.set_viewport_size({"width": 1366, "height": 800})
    sections = page.locator("section.queue-campaign")
    expect(sections.locator("h2")).to_have_text([TREC_TITLE, KIDDIE_TITLE])
    page.screenshot(path=str(shots(tmp_path) / "campaigns-queue.png"), full_page=True)
    for slug, work, title, label in (
        ("trec", two.trec_work, TREC_TITLE, "ManualNuggets"),
        ("kiddie", two.kiddie_work, KIDDIE_TITLE, "Question bank"),
    ):
        row = page.locator(f"section[data-campaign='{slug}'] tr[data-work='{work.pk}']")
        expect(row.locator("td").nth(0)).to_have_text("300")
        expect(row.locator("td").nth(2)).to_have_text(label)
        row.get_by_role("link", name="Start").click()
        expect(page).to_have_url(re.compile(rf"/c/{slug}/nuggets/work/{work.pk}/$"))
        expect(page.locator("#campaign-title")).to_have_text(title)
        # The workspace opens on the work's topic: a nugget added is saved to its campaign's list.
        expect(page.locator("#new-nugget")).to_be_visible()
        page.locator("#new-nugget").fill(f"a fact of {slug}")
        page.locator("#new-nugget").press("Enter")
        expect(page.locator("#nugget-list li.nugget")).to_have_count(1)
        page.locator("a", has_text="My work").first.click()
        expect(sections).to_have_count(2)
    for work, slug in ((two.trec_work, "trec"), (two.kiddie_work, "kiddie")):
        nugget_set = NuggetSet.objects.get(topic_id=work.topic_id, name=work.nugget_set_name)
        assert nugget_set.topic.campaign.slug == slug
        assert list(nugget_set.nuggets.values_list("text", flat=True)) == [f"a fact of {slug}"]
