"""What an organizer sees: the accounts page at work, the menu on one row, a disabled button that looks it."""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from assessor.models import AuditEntry
from assessor.work.roles import Role
from tests.builders import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_organizer_adds_an_assessor_and_deactivates_them(open_as):
    organizer = make_user(Role.ORGANIZER, username="boss")
    page = open_as(organizer, reverse("accounts:list"))
    page.get_by_label("User name").fill("newcomer")
    page.get_by_role("button", name="Add the assessor").click()
    notice = page.locator(".messages li.success")
    assert re.fullmatch(
        r"Assessor newcomer added\. Its password is \w{14} \(shown once: pass it on now\)\.", notice.inner_text()
    )
    row = page.locator('tr[data-user="newcomer"]')
    assert row.locator("td").nth(1).inner_text() == "assessor"
    assert row.locator("td").nth(2).inner_text() == "active"
    row.get_by_role("button", name="Deactivate").click()
    assert page.locator(".messages li.success").inner_text() == "newcomer deactivated: it can no longer log in."
    row = page.locator('tr[data-user="newcomer"]')
    assert row.locator("td").nth(2).inner_text() == "deactivated"
    assert row.get_by_role("button", name="Reactivate").is_visible()
    # The audit trail on the page, newest first.
    trail = page.locator("table.audit tbody tr")
    assert [trail.nth(i).locator("td").nth(2).inner_text() for i in range(trail.count())] == [
        "account deactivated",
        "account created",
    ]
    assert not User.objects.get(username="newcomer").is_active
    assert AuditEntry.objects.count() == 2


def test_the_organizer_menu_fits_one_row_at_1400_pixels(open_as):
    organizer = make_user(Role.ORGANIZER)
    page = open_as(organizer, "/")
    page.set_viewport_size({"width": 1400, "height": 900})
    tops = {round(box["y"]) for box in (link.bounding_box() for link in page.locator("nav.nav a").all()) if box}
    assert page.locator("nav.nav a").count() == 11
    assert len(tops) == 1


def test_a_disabled_button_does_not_look_like_an_enabled_one(open_as, settings):
    settings.LLM_MODEL = ""
    settings.LLM_API_KEY = ""
    settings.LLM_BASE_URL = ""
    page = open_as(make_user(Role.ORGANIZER), reverse("jobs:launch", args=["auto_assign"]))
    queue = page.get_by_role("button", name="Queue the job")
    assert queue.is_disabled()

    def look(locator) -> list[str]:
        return locator.evaluate(
            "b => { const s = getComputedStyle(b); return [s.backgroundColor, s.color, s.cursor]; }"
        )

    disabled = look(queue)
    # A plain button of the site, enabled, on the same page.
    active_look = page.evaluate(
        """() => { const b = document.createElement('button'); document.querySelector('main').append(b);
                   const s = getComputedStyle(b); return [s.backgroundColor, s.color, s.cursor]; }"""
    )
    assert disabled[2] == "not-allowed"
    assert active_look[2] == "pointer"
    assert disabled[0] != active_look[0] and disabled[1] != active_look[1]
