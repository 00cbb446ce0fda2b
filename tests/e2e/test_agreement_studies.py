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
    judge_every_answer_by_keyboard(page, "f", len(topic_pairs(work=work).order))
    submit(page)

    organizer.reload()
    sided = organizer.locator("#study-sided tbody tr").first.locator("td")
    # Full support everywhere: a said FS on three of the five pairs, b on the other two.
    for i, count in enumerate(["5", "3", "2", "0"], start=1):
        expect(sided.nth(i)).to_have_text(count)
    expect(organizer.locator("#study-kappa tbody tr")).to_have_count(3)
    expect(organizer.locator("#study-distribution tbody tr").nth(2).locator("td").nth(3)).to_have_text("5")
