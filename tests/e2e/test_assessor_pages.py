"""What an assessor sees on the judging pages and the nugget workspace, in a real Chromium.

Each test looks at the page as a person would: what is visible after a key, the colours the
browser computes, the marks in the text; and keeps a screenshot in pytest's tmp_path.
"""

import colorsys

import pytest
from django.urls import reverse

from assessor.models import AssessorWork, Citation, Segment, Sentence
from assignment.judging import assign_work_give, assignment_label_save, work_nugget_set
from nuggets.models import NuggetSet
from nuggets.services import nugget_operation_apply
from support import kinds as support_kinds
from support.judging import topic_pairs
from tests.scenarios import HUMAN_NUGGETS, give_assign, give_support, make_given_topic, make_scenario, nugget_set_of

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def settled(page) -> None:
    page.wait_for_function(
        "window.judgePage && window.judgePage.saves.queue.length === 0 && !window.judgePage.saves.sending"
    )


def rgb(page, selector: str) -> tuple[int, int, int]:
    """The background colour the browser computes for the first element matching selector."""
    value = page.eval_on_selector(selector, "el => getComputedStyle(el).backgroundColor")
    red, green, blue = (int(part) for part in value[value.index("(") + 1 : value.index(")")].split(",")[:3])
    return red, green, blue


def luminance(colour: tuple[int, int, int]) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    light, dark = sorted([luminance(a), luminance(b)], reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_rgb(page, selector: str) -> tuple[int, int, int]:
    value = page.eval_on_selector(selector, "el => getComputedStyle(el).color")
    red, green, blue = (int(part) for part in value[value.index("(") + 1 : value.index(")")].split(",")[:3])
    return red, green, blue


def label(work: AssessorWork, number: int, labels: list[str]) -> None:
    for nugget_id, value in zip(nugget_ids(work), labels, strict=False):
        work.refresh_from_db()
        assignment_label_save(
            work_id=work.pk, user=work.assessor, number=number, nugget_id=nugget_id, label=value,
            previous="", expected_version=work.version,
        )  # fmt: skip


def nugget_ids(work: AssessorWork) -> list[int]:
    return list(work_nugget_set(work=work).nuggets.order_by("position").values_list("pk", flat=True))


def centred(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    viewport = page.viewport_size
    middle = box["y"] + box["height"] / 2
    return abs(middle - viewport["height"] / 2) < 0.1 * viewport["height"]


# --- guidelines -----------------------------------------------------------------------------------


def test_h_opens_the_guidelines_on_the_judging_pages_centred(open_as, tmp_path):
    scenario = make_scenario()
    assign = give_assign(scenario)
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)

    page = open_as(scenario.assessor, reverse("judge:assign", args=[assign.pk]))
    expect(page.locator("#guidelines")).to_be_hidden()
    page.keyboard.press("h")
    guide = page.locator("#guidelines")
    expect(guide).to_be_visible()
    assert "The answer fully states the nugget's fact." in guide.inner_text()
    assert "The answer states part of the fact, or only implies it." in guide.inner_text()
    assert centred(page, "#help")
    page.screenshot(path=str(tmp_path / "assign-guidelines.png"))
    page.keyboard.press("h")
    expect(page.locator("#help")).to_be_hidden()
    page.keyboard.press("?")
    expect(page.locator("#help-keys")).to_be_visible()
    assert centred(page, "#help")
    page.keyboard.press("Escape")
    expect(page.locator("#help")).to_be_hidden()

    page = open_as(scenario.assessor, reverse("support:judge", args=[support.pk]))
    page.get_by_role("button", name="Guidelines").click()
    text = page.locator("#guidelines").inner_text()
    assert "The passage states everything the sentence says." in text
    assert "The passage supports no part of the sentence." in text
    page.screenshot(path=str(tmp_path / "support-guidelines.png"))


def test_h_opens_the_guidelines_and_the_notes_in_the_workspace(open_as, tmp_path):
    work = make_given_topic(condition="manual")
    AssessorWork.objects.filter(pk=work.pk).update(notes="Dates count as vital for this topic.")
    page = open_as(work.assessor, reverse("nuggets:work", args=[work.pk]))
    page.keyboard.press("h")
    guide = page.locator("#guidelines")
    expect(guide).to_be_visible()
    assert "A fact a good answer must contain." in guide.inner_text()
    assert "Worth having in an answer, but not essential." in guide.inner_text()
    assert page.locator("#campaign-notes").inner_text().endswith("Dates count as vital for this topic.")
    assert centred(page, "#help")
    page.screenshot(path=str(tmp_path / "workspace-guidelines.png"))
    page.keyboard.press("Escape")
    expect(guide).to_be_hidden()
    # No version counter for the assessor.
    assert page.locator("#set-status").inner_text() == "open"


# --- label buttons ------------------------------------------------------------------------------


def test_label_buttons_show_their_key_and_pressed_labels_are_green_yellow_red(open_as, tmp_path):
    scenario = make_scenario()
    assign = give_assign(scenario)
    label(assign, 1, ["support", "partial_support", "not_support"])
    page = open_as(scenario.assessor, reverse("judge:answer", args=[assign.pk, 1]))
    page.screenshot(path=str(tmp_path / "assign-labels.png"))
    first = page.locator("#rows li.jrow").first
    assert [b.inner_text().split() for b in first.locator("button.choice").all()] == [
        ["support", "s"],
        ["partial", "p"],
        ["not", "support", "n"],
    ]
    expect(first.locator("button.choice kbd").first).to_be_visible()

    green = rgb(page, "#rows li.jrow:nth-child(1) button.choice.on")
    yellow = rgb(page, "#rows li.jrow:nth-child(2) button.choice.on")
    red = rgb(page, "#rows li.jrow:nth-child(3) button.choice.on")
    assert green[1] > green[0] + 40 and green[1] > green[2] + 20, green
    assert yellow[0] > 180 and yellow[1] > 150 and yellow[2] < 100, yellow
    assert red[0] > red[1] + 80 and red[0] > red[2] + 80, red
    for row, colour in [(1, green), (2, yellow), (3, red)]:
        text = text_rgb(page, f"#rows li.jrow:nth-child({row}) button.choice.on")
        assert contrast(colour, text) >= 4.5, (row, colour, text)
    # An unpressed button stays light.
    assert min(rgb(page, "#rows li.jrow:nth-child(1) button.choice:not(.on)")) > 200

    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    page = open_as(scenario.assessor, reverse("support:answer", args=[support.pk, 1]))
    page.keyboard.press("s")
    # The answer's last label: the page would move on after its pause (judge.js's ADVANCE_MS), as the colour is read;
    # a key during the pause keeps the assessor on the answer.
    page.keyboard.press("Shift")
    settled(page)
    fs = rgb(page, "#rows li.jrow:nth-child(1) button.choice.on")
    assert fs == green
    page.screenshot(path=str(tmp_path / "support-labels.png"))


# --- finishing ------------------------------------------------------------------------------------


def test_the_last_label_offers_the_submit_which_asks_first_then_links_to_the_next_work(open_as, tmp_path):
    scenario = make_scenario()
    assign = give_assign(scenario)
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    for number in (1, 2):
        label(assign, number, ["support"] * 3)
    label(assign, 3, ["support", "support"])
    page = open_as(scenario.assessor, reverse("judge:assign", args=[assign.pk]))
    page.wait_for_url("**/answer/3/")
    expect(page.locator("#all-done")).to_be_hidden()
    page.keyboard.press("n")
    settled(page)
    # Nothing left anywhere: no move, an offer to submit instead.
    page.wait_for_selector("#all-done:not([hidden])")
    assert page.url.endswith("/answer/3/")
    page.get_by_role("button", name="Submit the topic…").click()
    dialog = page.locator("#submit-confirm")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("9 of 9 labels")
    assert centred(page, "#submit-confirm")
    page.screenshot(path=str(tmp_path / "submit-confirm.png"))
    page.get_by_role("button", name="Keep working").click()
    expect(dialog).to_be_hidden()
    assign.refresh_from_db()
    assert assign.status == AssessorWork.Status.IN_PROGRESS
    # Esc closes it too; the topic stays open.
    page.get_by_role("button", name="Submit topic").click()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.get_by_role("button", name="Submit topic").click()
    page.get_by_role("button", name="Submit and freeze").click()
    page.wait_for_selector("#judge[data-frozen='1']")
    assign.refresh_from_db()
    assert assign.status == AssessorWork.Status.SUBMITTED
    page.screenshot(path=str(tmp_path / "after-submit.png"))
    next_link = page.locator("#next-work")
    expect(next_link).to_have_text(f"Support from scratch of topic {scenario.topic.pk}")
    next_link.click()
    page.wait_for_url(f"**/judge/{support.pk}/answer/*/")


def test_a_key_during_the_pause_keeps_the_assessor_on_the_answer(open_as):
    scenario = make_scenario()
    assign = give_assign(scenario)
    label(assign, 1, ["support", "support"])
    page = open_as(scenario.assessor, reverse("judge:answer", args=[assign.pk, 1]))
    page.keyboard.press("n")  # the answer's last label ...
    page.keyboard.press("k")  # ... and at once, back to a row: stay
    # The pause's timer (600 ms) is cancelled by the key itself, synchronously: checked at once, not after a wait.
    assert page.evaluate("window.judgePage.state.advance") is None
    settled(page)
    assert page.url.endswith("/answer/1/")


# --- reading help ---------------------------------------------------------------------------------


def marks(page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector + " mark.shared", "ms => ms.map(m => m.textContent)")


def test_shared_words_are_marked_in_the_sentence_and_its_passage(open_as, tmp_path):
    scenario = make_scenario()
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    page = open_as(scenario.assessor, reverse("support:answer", args=[support.pk, 1]))
    # "Answer N says the capital is Exampleton." against "The capital of the example country is
    # Exampleton, since 1901.": "capital" and "Exampleton" (4+ letters, not stop words); not "the", "is".
    first = "#rows li.jrow:nth-child(1)"
    assert marks(page, first + " .pair-sentence") == ["capital", "Exampleton"]
    assert marks(page, first + " .segment-box") == ["capital", "Exampleton"]
    # The passage has room: no scroll box of its own, and as wide as the sentence.
    box = page.eval_on_selector(first + " .segment-box", "el => [el.scrollHeight, el.clientHeight, el.clientWidth]")
    assert box[0] <= box[1] + 1
    sentence_width = page.eval_on_selector(first + " .pair-sentence", "el => el.clientWidth")
    assert box[2] >= sentence_width - 20 and box[2] > 400
    page.screenshot(path=str(tmp_path / "support-marks.png"), full_page=True)


def test_a_possessive_shares_its_word(open_as, tmp_path):
    scenario = make_scenario()
    Segment.objects.filter(text__startswith="The capital of the example country").update(
        text="Exampleton’s status as the capital dates from 1901; the country's capital moved once."
    )
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    page = open_as(scenario.assessor, reverse("support:answer", args=[support.pk, 1]))
    first = "#rows li.jrow:nth-child(1)"
    # "Answer N says the capital is Exampleton.": "Exampleton’s" is Exampleton; "country's" is in no sentence.
    assert marks(page, first + " .pair-sentence") == ["capital", "Exampleton"]
    assert marks(page, first + " .segment-box") == ["Exampleton’s", "capital", "capital"]
    page.screenshot(path=str(tmp_path / "support-possessive.png"))


def test_the_selected_nuggets_words_are_marked_in_the_answer(open_as, tmp_path):
    scenario = make_scenario()
    assign = give_assign(scenario)
    page = open_as(scenario.assessor, reverse("judge:answer", args=[assign.pk, 1]))
    assert HUMAN_NUGGETS[0][0] == "The answer names the capital"
    # Its words "answer", "names", "capital" against the three sentences: "Answer" starts each, "capital" once.
    assert sorted(marks(page, "#answer-sentences")) == ["Answer", "Answer", "Answer", "capital"]
    assert marks(page, "#rows li.jrow:nth-child(1) .nugget-words") == ["answer", "capital"]
    page.screenshot(path=str(tmp_path / "assign-marks.png"))
    page.keyboard.press("j")  # "It gives a date": nothing in common
    assert marks(page, "#answer-sentences") == []
    assert marks(page, "#rows li.jrow:nth-child(1) .nugget-words") == []


def test_the_segment_filter_marks_and_counts_its_matches(open_as, tmp_path):
    work = make_given_topic(condition="manual", grades=[2, 1, 0, 3])
    page = open_as(work.assessor, reverse("nuggets:work", args=[work.pk]))
    page.locator("#segment-filter").fill("passage about")
    # Three segments of grade >= 1, each "... passage about nuggets.": two matches each.
    expect(page.locator("#segments li.segment:not([hidden])")).to_have_count(3)
    expect(page.locator("#segment-count")).to_have_text("3 segments, 6 matches")
    assert marks(page, "#segments li.segment:not([hidden]) .seg-text") == ["passage", "about"] * 3
    page.screenshot(path=str(tmp_path / "workspace-filter.png"))
    page.locator("#segment-filter").fill("")
    expect(page.locator("#segment-count")).to_have_text("")
    assert marks(page, "#segments") == []


def test_the_queue_page(open_as, tmp_path):
    scenario = make_scenario()
    assign = give_assign(scenario)
    give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    page = open_as(scenario.assessor, reverse("home"))
    page.screenshot(path=str(tmp_path / "queue.png"))
    rows = page.locator("#work-queue tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_have_attribute("data-work", str(assign.pk))
    expect(rows.nth(0).locator(".progress-left")).to_have_text("0 / 9 labels")
    expect(rows.nth(1).locator(".progress-left")).to_have_text("0 / 5 pairs")


def test_submitting_a_nugget_list_asks_first_then_links_to_the_labelling_that_depends_on_it(open_as, tmp_path):
    work = make_given_topic(condition="manual", grades=[2])
    page = open_as(work.assessor, reverse("nuggets:work", args=[work.pk]))
    saved = "window.nuggetWorkspace.saves.queue.length === 0 && !window.nuggetWorkspace.saves.sending"
    page.keyboard.press("n")
    page.keyboard.type("one vital fact")
    page.keyboard.press("Enter")
    page.wait_for_selector("#nugget-list li.nugget")
    page.wait_for_function(saved)
    page.keyboard.press("Escape")
    page.keyboard.press("v")
    page.wait_for_function(saved)
    page.wait_for_selector("#nugget-list li.nugget.vital")
    assign = assign_work_give(topic=work.topic, assessor=work.assessor, by=work.created_by)
    page.get_by_role("button", name="Submit", exact=True).click()
    dialog = page.locator("#submit-confirm")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("holds 1 nuggets")
    page.get_by_role("button", name="Keep working").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#nugget-panel")).to_have_attribute("data-frozen", "0")
    page.get_by_role("button", name="Submit", exact=True).click()
    page.get_by_role("button", name="Submit and freeze").click()
    page.wait_for_selector("#nugget-panel[data-frozen='1']")
    # A frozen list takes no sources; the next work in the queue is the ManualAssign on this list.
    expect(page.locator(".source-form").first).to_be_hidden()
    link = page.locator("#next-work")
    expect(link).to_have_text(f"ManualAssign of topic {work.topic_id}")
    page.screenshot(path=str(tmp_path / "workspace-submitted.png"))
    expect(link).to_have_attribute("href", reverse("judge:assign", args=[assign.pk]))


# --- every assessor page: guidelines, keys and colours -------------------------------------------


def hue(colour: tuple[int, int, int]) -> float:
    """The colour's hue in degrees (0 red, 60 yellow, 120 green)."""
    return colorsys.rgb_to_hsv(*(c / 255 for c in colour))[0] * 360


def add_nuggets(work: AssessorWork, texts: list[str]) -> None:
    for text in texts:
        nugget_operation_apply(
            work_id=work.pk, user=work.assessor, operation="add", params={"text": text},
            expected_version=nugget_set_of(work).version,
        )  # fmt: skip


def two_pairs(work: AssessorWork) -> int:
    """The number of the work's first answer with two pairs or more to judge: the answers' order is shuffled
    by the assessor's and the topic's ids, which differ from run to run on PostgreSQL (its sequences go on)."""
    pairs = topic_pairs(work=work)
    return next(number for number, answer in enumerate(pairs.order, start=1) if len(pairs.pairs_of[answer]) >= 2)


def test_every_assessor_page_shows_its_guidelines_its_keys_and_one_colour_scheme(open_as, tmp_path):
    scenario = make_scenario()
    # A third pair in every answer: the two labels pressed below leave one to do, so the page does not move on to
    # the next answer (0.6 s after an answer's last label) while the test reads the colours.
    passage = Segment.objects.get(text__startswith="The capital of the example country")
    for answer in scenario.answers:
        sentence = Sentence.objects.create(answer=answer, index=3, text="It adds that Exampleton is the capital.")
        Citation.objects.create(sentence=sentence, position=0, segment=passage, reference_rank=0)
    manual = make_given_topic(condition="manual", assessor=scenario.assessor)
    add_nuggets(manual, ["a vital fact", "an okay fact"])
    post_edit = make_given_topic(condition=NuggetSet.Kind.AUTO_EDIT, assessor=scenario.assessor)
    assign = give_assign(scenario)
    scratch = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    postedit = give_support(scenario, support_kinds.SUPPORT_POSTEDIT)
    nugget_terms = ["A fact a good answer must contain.", "Worth having in an answer, but not essential."]
    assign_terms = ["The answer fully states the nugget's fact.", "The fact is not in the answer."]
    support_terms = [
        "The passage states everything the sentence says.",
        "The passage supports no part of the sentence.",
    ]
    # page, url, what its guidelines define, its label buttons with their keys, the keys that press the
    # green and the yellow label on the first two rows (the workspace: its buttons are clicked).
    pages = [
        ("workspace", reverse("nuggets:work", args=[manual.pk]), nugget_terms, ["vital v", "okay o"], None),
        ("post-edit", reverse("nuggets:work", args=[post_edit.pk]), nugget_terms, ["vital v", "okay o"], None),
        ("assign", reverse("judge:answer", args=[assign.pk, 1]), assign_terms, ["support s", "partial p", "not support n"], "sp"),
        ("scratch", reverse("support:answer", args=[scratch.pk, two_pairs(scratch)]), support_terms, ["FS s", "PS p", "NS n"], "sp"),
        ("postedit", reverse("support:answer", args=[postedit.pk, two_pairs(postedit)]), support_terms, ["FS s", "PS p", "NS n"], "sp"),
    ]  # fmt: skip
    greens, yellows = {}, {}
    for name, url, terms, buttons, keys in pages:
        page = open_as(scenario.assessor, url)
        # The guidelines are one key away, and the header says which.
        expect(page.locator("#guide-open kbd")).to_have_text("h")
        page.keyboard.press("h")
        guide = page.locator("#guidelines")
        expect(guide).to_be_visible()  # a condition, not a moment: the dialog opens when the key is handled
        for term in terms:
            assert term in guide.inner_text(), (name, term)
        assert centred(page, "#help"), name
        page.screenshot(path=str(tmp_path / f"{name}-guidelines.png"))
        page.keyboard.press("Escape")
        expect(guide).to_be_hidden()

        if keys is None:
            choices = page.locator("#nugget-list li.nugget").first.locator("button.imp")
            page.locator("#nugget-list li.nugget").nth(0).locator("button.imp.vital").click()
            page.wait_for_selector("#nugget-list li.nugget:nth-child(1) button.imp.vital.on")
            page.locator("#nugget-list li.nugget").nth(1).locator("button.imp.okay").click()
            page.wait_for_selector("#nugget-list li.nugget:nth-child(2) button.imp.okay.on")
            pressed = ["#nugget-list li.nugget:nth-child(1) .imp.on", "#nugget-list li.nugget:nth-child(2) .imp.on"]
        else:
            choices = page.locator("#rows li.jrow").first.locator("button.choice")
            for key in keys:
                page.keyboard.press(key)
                settled(page)
            page.wait_for_selector("#rows li.jrow:nth-child(2) button.choice.on")
            pressed = ["#rows li.jrow:nth-child(1) .choice.on", "#rows li.jrow:nth-child(2) .choice.on"]
        # Each label button shows its key, visibly.
        expect(choices).to_have_text(buttons)
        assert all(kbd.is_visible() for kbd in choices.locator("kbd").all()), name
        greens[name], yellows[name] = rgb(page, pressed[0]), rgb(page, pressed[1])
        for selector, colour in zip(pressed, [greens[name], yellows[name]], strict=True):
            assert contrast(colour, text_rgb(page, selector)) >= 4.5, (name, selector)
        # The first screen, where the labels were pressed (a full page of 30 nuggets is slow on a busy machine).
        page.screenshot(path=str(tmp_path / f"{name}-labels.png"), timeout=30_000)

    # One scheme: every page fills its first label with the same green and its middle one with the same yellow.
    assert len(set(greens.values())) == 1, greens
    assert len(set(yellows.values())) == 1, yellows
    green, yellow = greens["assign"], yellows["assign"]
    assert 100 <= hue(green) <= 160, green
    assert 35 <= hue(yellow) <= 55 and min(yellow[:2]) > 150, yellow
    # ... and the organizer's pages mark vital and okay in the same families.
    page = open_as(scenario.organizer, reverse("collection:topic", args=[manual.topic_id]))
    page.screenshot(path=str(tmp_path / "organizer-topic.png"), full_page=True, timeout=30_000)
    assert text_rgb(page, ".badge.vital") == green
    assert 30 <= hue(text_rgb(page, ".badge.okay")) <= 55


def test_the_workspace_delete_action_is_a_readable_red_word(open_as, tmp_path):
    work = make_given_topic(condition="manual", grades=[2])
    add_nuggets(work, ["a fact to delete"])
    page = open_as(work.assessor, reverse("nuggets:work", args=[work.pk]))
    page.locator("#nugget-list li.nugget .nugget-text").first.click()
    delete = page.locator("#nugget-list li.nugget button.danger").first
    expect(delete).to_be_visible()
    page.screenshot(path=str(tmp_path / "workspace-selected.png"))
    background = page.eval_on_selector(
        "#nugget-list li.nugget button.danger", "el => getComputedStyle(el).backgroundColor"
    )
    assert background in ("rgba(0, 0, 0, 0)", "transparent"), background
    word = text_rgb(page, "#nugget-list li.nugget button.danger")
    assert hue(word) < 15 or hue(word) > 345, word
    assert contrast(word, rgb(page, "#nugget-list li.nugget")) >= 4.5


def test_organizer_notes_are_announced_on_the_page_itself(open_as):
    """They were only inside the help dialog: nothing on the page said they existed."""
    scenario = make_scenario()
    work = give_assign(scenario)
    AssessorWork.objects.filter(pk=work.pk).update(notes="Count a date as support only when the day is right.")
    page = open_as(scenario.assessor, reverse("judge:answer", args=[work.pk, 1]))
    notice = page.locator("#notes-notice")
    expect(notice).to_be_in_viewport()
    expect(notice).to_contain_text("The organizers left notes for this topic: Count a date as support only")
    notice.get_by_role("button", name="read them").click()
    expect(page.locator("#campaign-notes")).to_be_visible()
    # Without notes, no notice.
    plain = make_given_topic(condition="manual", assessor=scenario.assessor)
    page = open_as(scenario.assessor, reverse("nuggets:work", args=[plain.pk]))
    expect(page.locator("#nugget-list")).to_be_visible()
    expect(page.locator("#notes-notice")).to_have_count(0)


def test_words_are_marked_by_their_stems_and_the_marks_say_what_they_mean(open_as):
    """ "eclipses" / "eclipse", "effects" / "effect" were left unmarked: words are compared by their stems."""
    scenario = make_scenario()
    Segment.objects.filter(text__startswith="The capital of the example country").update(
        text="The eclipse had visible effects on the capitals of the region."
    )
    # Every answer's first sentence (the page's order of answers is its own).
    Sentence.objects.filter(answer__in=scenario.answers, index=0).update(text="Eclipses have an effect on the capital.")
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    page = open_as(scenario.assessor, reverse("support:answer", args=[support.pk, 1]))
    first = "#rows li.jrow:nth-child(1)"
    # Stems: eclips, effect, capit on both sides; "have", "visible", "region" on one only.
    assert marks(page, first + " .pair-sentence") == ["Eclipses", "effect", "capital"]
    assert marks(page, first + " .segment-box") == ["eclipse", "effects", "capitals"]
    first_mark = page.locator(first + " .pair-sentence mark.shared").first
    expect(first_mark).to_have_attribute("title", "a word both sides use, in some form (effect, effects)")
    expect(first_mark).to_be_in_viewport(ratio=1)
    page.keyboard.press("h")
    expect(page.locator("#help")).to_be_visible()
    expect(page.locator("#marks-meaning")).to_be_visible()
    expect(page.locator("#marks-meaning")).to_contain_text("words both sides use, in some form")
    expect(page.locator("#marks-meaning")).to_be_in_viewport(ratio=1)


def test_the_workspace_leads_to_the_one_queue_of_every_kind_of_work(open_as):
    """The workspace's "My topics" listed nugget work only, the judging pages' "My work" everything."""
    scenario = make_scenario()
    nuggets = make_given_topic(condition="manual", assessor=scenario.assessor)
    assign = give_assign(scenario)
    page = open_as(scenario.assessor, reverse("nuggets:work", args=[nuggets.pk]))
    page.get_by_role("link", name="My work", exact=True).first.click()
    queue = page.locator("#work-queue")
    expect(queue).to_be_in_viewport()
    expect(queue.locator(f"tr[data-work='{nuggets.pk}']")).to_contain_text("ManualNuggets")
    expect(queue.locator(f"tr[data-work='{assign.pk}']")).to_contain_text("ManualAssign")
    expect(page.get_by_text("My topics")).to_have_count(0)
