"""The calibration page's check of the method, in the browser: chosen, run, and its table in view."""

import pytest
from django.urls import reverse

from assessor.work.roles import Role
from tests.builders import make_user
from tests.metaeval.builders import build_conditions

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_check_of_the_method_shows_each_share_in_view(open_as):
    build_conditions()
    page = open_as(make_user(Role.ORGANIZER), reverse("metaeval:calibrate"))
    page.select_option("#sim-human", "auto_edit/manual")
    page.select_option("#sim-metric", "A")
    page.fill("#sim-shares", "50 100")
    page.fill("#sim-seeds", "3")
    page.get_by_role("button", name="Check").click()
    table = page.locator("#simulation")
    expect(table).to_be_in_viewport()
    # 3 runs x 2 topics: half of each run's answers is one, all of them two.
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator("td").nth(1)).to_have_text("3 of 6")
    expect(rows.nth(1).locator("td").nth(1)).to_have_text("6 of 6")
    # Every answer scored: the estimates are the human means, so every interval holds them.
    expect(rows.nth(1).locator("td").nth(3)).to_have_text("100.0%")
