"""A second assessor and a disagreement study in a real Chromium: the organizer gives, the assessor judges,
the organizer reads the agreement."""

import pytest
from django.urls import reverse

from assessor.models import AssessorWork
from assessor.work.roles import Role
from assignment import judging
from metaeval.models import Study
from support.judging import topic_pairs
from tests.builders import make_support_label, make_user
from tests.e2e.keys import judge_every_answer_by_keyboard, press, submit
from tests.scenarios import give_assign, make_scenario

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_second_assessor_repeats_manual_assign_and_the_organizer_sees_their_agreement(open_as):
    scenario = make_scenario()
    first = give_assign(scenario)
    # The first person labels each answer support, partial, not support, and submits.
    for number in (1, 2, 3):
        for nugget, value in zip(scenario.nuggets, ["support", "partial_support", "not_support"], strict=True):
            judging.assignment_label_save(
                work_id=first.pk, user=first.assessor, number=number, nugget_id=nugget.pk,
                label=value, previous="", expected_version=first.version,
            )  # fmt: skip
    judging.assign_submit(work_id=first.pk, user=first.assessor, expected_version=first.version)
    second = make_user(Role.ASSESSOR, username="second-assessor")

    organizer = open_as(scenario.organizer, reverse("judge:organize"))
    form = organizer.locator("#give-form")
    form.get_by_label("Or type topic ids").fill(scenario.topic.pk)
    form.get_by_label("Assessor").select_option(label="second-assessor")
    form.get_by_label("Assigner name").fill("manual-2")
    form.get_by_label("Replicate of").fill("manual")
    form.get_by_role("button", name="Give").click()
    organizer.wait_for_selector("text=ManualAssign given to second-assessor")
    work = AssessorWork.objects.get(assessor=second)

    page = open_as(second, reverse("judge:assign", args=[work.pk]))
    page.wait_for_url("**/answer/1/")
    expect(page.locator("button.choice.on")).to_have_count(0)  # none of the first person's labels is shown
    for number in (1, 2, 3):
        page.wait_for_url(f"**/answer/{number}/")
        press(page, "s", "p", "n")
    submit(page)

    organizer.goto(reverse("metaeval:replicates"))
    section = organizer.locator("section.replicate")
    expect(section.locator("h2")).to_contain_text("manual-2")
    people = section.locator("table.agreement tbody tr").first
    expect(people.locator("td").nth(3)).to_have_text("9")
    expect(people.locator("td").nth(4)).to_have_text("1.000")  # the same labels as the first person


def test_an_organizer_makes_a_study_the_assessor_judges_it_and_the_organizer_reads_the_table(open_as):
    scenario = make_scenario()
    pairs = [(0, 0), (1, 0), (2, 0), (0, 2), (1, 2)]
    for (answer, sentence), a, b in zip(pairs, [2, 2, 1, 0, 2], [0, 1, 2, 2, 0], strict=True):
        make_support_label(scenario.answers[answer], sentence, a, method="nist-a")
        make_support_label(scenario.answers[answer], sentence, b, method="nist-b")

    organizer = open_as(scenario.organizer, reverse("metaeval:studies"))
    form = organizer.locator("#study-form")
    form.locator("#id_name").fill("eclipse")
    form.get_by_label("Source a").select_option("support:nist-a")
    form.get_by_label("Source b").select_option("support:nist-b")
    form.get_by_label("Seed").fill("2024")
    form.get_by_label("Independent assessor").select_option(str(scenario.assessor.pk))
    form.get_by_role("button", name="Sample and give").click()
    organizer.wait_for_url("**/studies/eclipse/")
    study = Study.objects.get(name="eclipse")
    assert (study.k, study.seed, study.items_total) == (15, 2024, 5)

    work = AssessorWork.objects.get(source=study.judge)
    page = open_as(scenario.assessor, reverse("support:judge", args=[work.pk]))
    assert "nist-" not in page.content() and "eclipse" not in page.content()
    judge_every_answer_by_keyboard(page, "s", len(topic_pairs(work=work).order))
    submit(page)

    organizer.reload()
    sided = organizer.locator("#study-sided tbody tr").first.locator("td")
    # Full support everywhere: a said FS on three of the five pairs, b on the other two.
    for i, count in enumerate(["5", "3", "2", "0"], start=1):
        expect(sided.nth(i)).to_have_text(count)
    expect(organizer.locator("#study-kappa tbody tr")).to_have_count(3)
    expect(organizer.locator("#study-distribution tbody tr").nth(2).locator("td").nth(3)).to_have_text("5")


def test_a_study_of_argue_style_judgments_asks_the_assessor_the_sampled_ones_only(open_as, two_llm_endpoints, tmp_path):
    """Two LLMs that disagree on every judgment of the hand-made ARGUE-style collection (tests/argue/conftest.py):
    the organizer samples two per topic, the assessor answers them by keyboard, the table shows who sided with whom."""
    from argue.judging import topic_plan
    from argue.llm import argue_job_create
    from assessor.jobs.engine import job_run_sync
    from tests.argue.conftest import argue_collection_make

    argue_collection_make()
    job_run_sync(argue_job_create(name="llm", bank="gold", endpoint="alpha").pk)
    job_run_sync(argue_job_create(name="flip", bank="gold", endpoint="beta").pk)
    assessor = make_user(Role.ASSESSOR, username="ivy")
    organizer = open_as(make_user(Role.ORGANIZER), reverse("metaeval:studies"))
    form = organizer.locator("#study-form")
    form.locator("#id_name").fill("argue-again")
    form.get_by_label("Source a").select_option("argue:llm")
    form.get_by_label("Source b").select_option("argue:flip")
    form.get_by_label("Nugget list or bank").fill("gold")
    form.get_by_label("Items per topic (k)").fill("2")
    form.get_by_label("Seed").fill("11")
    form.get_by_label("Independent assessor").select_option(str(assessor.pk))
    form.get_by_role("button", name="Sample and give").click()
    organizer.wait_for_url("**/studies/argue-again/")
    study = Study.objects.get(name="argue-again")
    assert study.items_total == 4 and study.family == "argue"
    expect(organizer.locator("main")).to_contain_text("ARGUE-style judgments on the question bank gold")

    # The assessor's two works hold two judgments each: y for every one, a page after another, then submit.
    for work in AssessorWork.objects.filter(source=study.judge).order_by("topic_id"):
        page = open_as(assessor, f"/argue/work/{work.pk}/")
        page.set_viewport_size({"width": 1280, "height": 800})
        page.wait_for_url("**/sentence/1/")
        page.wait_for_function("window.judgePage !== undefined")
        assert "flip" not in page.content() and "argue-again" not in page.content()  # blind to both, and to why
        expect(page.locator("#rows li.jrow.selected")).to_be_in_viewport()
        page.screenshot(path=f"{tmp_path}/argue-study-{work.topic_id}.png")
        # Page by page: its rows answered y, the page moves on to the next sentence by itself.
        for number, sentence in enumerate(topic_plan(work).pages, start=1):
            page.wait_for_url(f"**/sentence/{number}/")
            page.wait_for_function(
                f"window.judgePage !== undefined && document.querySelectorAll('#rows li.jrow').length == {sentence.asks}"
            )
            press(page, *["y"] * sentence.asks)
        expect(page.locator("#all-done")).to_be_visible()
        submit(page)

    organizer.reload()
    expect(organizer.locator("#study-kappa tbody tr")).to_have_count(3)
    sided = organizer.locator("#study-sided tbody tr").first.locator("td")
    # yes everywhere: the assessor sides with whichever source said yes on each of the 4 items.
    said_yes_by_a = sum(1 for item in study.sample.values() for one in item if _argue_label("llm", tuple(one)) == "yes")
    for i, count in enumerate(["4", str(said_yes_by_a), str(4 - said_yes_by_a), "0"], start=1):
        expect(sided.nth(i)).to_have_text(count)
    organizer.screenshot(path=f"{tmp_path}/argue-study-table.png", full_page=True)


def _argue_label(name: str, item: tuple[int, ...]) -> str:
    from argue.agreement import item_labels

    return next(labels[item] for labels in item_labels(name).values() if item in labels)
