"""A key that does nothing on a judging page shows the page's keys for a moment, beside the selected row's buttons;
a label key labels, and hides it."""

import re

import pytest
from django.urls import reverse

from support import kinds as support_kinds
from support.judging import support_page_load
from support.models import SupportLabel
from tests.e2e.keys import press, settled
from tests.scenarios import give_assign, give_support, make_scenario

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOT = "/tmp/judging-key-hint.png"


def test_an_unmapped_key_shows_the_keys_and_a_label_key_saves_and_hides_them(open_as):
    scenario = make_scenario(plant_llm=False)
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    page = open_as(scenario.assessor, reverse("support:judge", args=[work.pk]))
    page.set_viewport_size({"width": 1024, "height": 768})
    page.wait_for_function("window.judgePage !== undefined")
    hint = page.locator("#key-hint")
    selected = page.locator("#rows li.jrow.selected")
    expect(selected).to_have_count(1)

    # Keys that do something never show it: moving down and back up a row, a modifier combination, Space.
    press(page, "j", "k")
    page.keyboard.press("Control+f")
    page.keyboard.press(" ")
    expect(hint).to_be_hidden()

    # f was the support page's full-support key; now it does nothing here, and the page says which keys do.
    page.keyboard.press("f")
    expect(hint).to_be_visible()
    expect(hint).to_be_in_viewport()
    expect(hint).to_have_text("“f” does nothing here. Keys here: s FS, p PS, n NS; j k rows; ← → answers; ? every key.")
    # Beside the buttons of the selected row, where the assessor looks.
    expect(selected.locator("#key-hint")).to_have_count(1)
    # The page shows no template comment (a Django {# #} spans one line only).
    expect(page.locator("#judge-sticky")).not_to_contain_text("{#")
    page.screenshot(path=SCREENSHOT)
    assert not SupportLabel.objects.filter(work=work).exists()

    # s labels the selected pair full support (FS, 2), and the hint goes at once.
    first_sentence = int(selected.get_attribute("data-row"))
    page.keyboard.press("s")
    settled(page)
    expect(hint).to_be_hidden()
    row = page.locator(f"#rows li.jrow[data-row='{first_sentence}']")
    expect(row.locator("button.choice.on")).to_have_text(re.compile(r"FS\s+s"))
    saved = SupportLabel.objects.get(work=work)
    assert (saved.citation.sentence.index, saved.label) == (first_sentence, 2)
    # The page's own reading agrees: that pair of answer 1 is labelled FS.
    loaded = support_page_load(work=work, number=1)
    assert [(r.sentence.index, r.label) for r in loaded.pairs if r.label is not None] == [(first_sentence, 2)]


def test_the_hint_lists_each_page_own_keys(open_as):
    scenario = make_scenario(plant_llm=False)
    work = give_assign(scenario)
    page = open_as(scenario.assessor, reverse("judge:assign", args=[work.pk]))
    page.wait_for_function("window.judgePage !== undefined")
    page.keyboard.press("y")
    hint = page.locator("#key-hint")
    expect(hint).to_be_in_viewport()
    expect(hint).to_have_text(
        "“y” does nothing here. Keys here: s support, p partial, n not support; j k rows; ← → answers; ? every key."
    )
