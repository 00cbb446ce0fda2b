"""The truth page in Chromium, its form left as it opens: the track's missing-run rule, said on the page, and a
topic whose scores all tie shown without figures and counted in the note."""

import os
from pathlib import Path

import pytest

from assessor.work.roles import Role
from tests.builders import make_user
from tests.metaeval.truth_data import kiddie_leaderboards_import

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_form_as_it_opens_counts_a_missing_run_0_and_says_so(open_as, tmp_path):
    kiddie_leaderboards_import(tmp_path)
    page = open_as(make_user(Role.ORGANIZER), "/metaeval/truth/")
    page.set_viewport_size({"width": 1366, "height": 768})
    expect(page.get_by_label("Missing runs")).to_have_value("zero")
    page.get_by_label("Judged source").select_option("scores:judged")
    page.get_by_label("Truth", exact=True).select_option("scores:kiddie-truth")
    page.get_by_label("Each topic's figures").check()
    page.get_by_role("button", name="Correlate").click()
    expect(page.locator("#truth-runs")).to_be_visible()
    expect(page.locator("[role=alert]")).to_have_count(0)
    expect(page.locator("#missing-rule")).to_contain_text("a truth run the judged source lacks counts 0")
    expect(page.locator("#truth-runs")).to_contain_text("0.6667")  # (5 - 1) / 6: run4 counted 0
    shots = Path(os.environ.get("SCREENSHOT_DIR", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "truth-default.png"), full_page=True)
    # Skip leaves run4 out: bee's judged scores then all tie (0.8 each), no figure there, the note says so.
    page.get_by_label("Missing runs").select_option("skip")
    page.get_by_role("button", name="Correlate").click()
    expect(page.locator("#truth-topics .topics-without")).to_contain_text(
        "1 topic whose scores all tie, without figures: bee."
    )
    bee = page.locator("#truth-topics tr", has=page.locator("td.mono", has_text="bee"))
    expect(bee.locator("td.num")).to_have_text(["—"] * 6)
    page.screenshot(path=str(shots / "truth-skip-tied.png"), full_page=True)
