"""The kiddie collection through the report family in Chromium, as an organizer and an assessor: the request on
the topic page, an LLM's preferences and its PrefNugget bank launched from the jobs page, the bank of `bee`
post-edited by the assessor, the LLM's grades on the post-edited bank, the assessor's grades by keyboard, the
grade leaderboard with both sources, and the truth leaderboard page against the kiddie truth."""

import os
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from scipy import stats

from assessor.models import Answer, AssessorWork
from assessor.work.roles import Role
from grades.judging import report_order
from grades.kinds import GRADE_WORK
from grades.models import GradeLabel
from nuggets.banks import Answer as GoldAnswer
from nuggets.banks import bank_questions
from preferences.judging import pair_order
from preferences.kinds import PREFERENCE_WORK
from preferences.models import PreferenceLabel
from reports.importing import reports_import, requests_import
from tests.builders import make_user
from tests.e2e.keys import press, settled, submit
from tests.reports.kiddie import KIDDIE, KIDDIE_RUNS, KIDDIE_TOPICS

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
TRUTH = {"run1": 0.864, "run2": 0.692, "run3": 0.316, "run4": 0.088}  # the kiddie truth's `all` rows
REWORDED = "How do bees turn nectar into honey?"
GOLD = "They fan it with their wings"
KEYS = ["5", "3", "1", "0"]  # the assessor's grade of every question, per report in the assessor's order


def long_words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z0-9']+", text) if len(word) >= 4}


def fake_grade(question: str, passage: str) -> int:
    """The fake server's grading rule, written again: the question's long words in the passage, at most 5."""
    return min(5, len(long_words(question) & long_words(passage)))


def runs_of(answers: list[int]) -> dict[int, str]:
    return dict(Answer.objects.filter(pk__in=answers).values_list("pk", "run__run_id"))


def open_menu_link(page, text: str) -> None:
    group = page.locator("nav.nav details.nav-group")
    group.locator("summary").click()
    link = group.locator(".nav-menu a", has_text=text)
    expect(link).to_be_in_viewport()
    link.click()


def launch(page, label: str, fields: dict[str, str], selects: dict[str, str] | None = None) -> None:
    """From the jobs page, the launch form of `label`, filled and queued (the worker works it at once)."""
    page.locator("nav.nav a", has_text="Jobs").click()
    page.get_by_role("link", name=label, exact=True).click()
    for name, value in fields.items():
        page.get_by_label(re.compile(rf"^{name}:?$")).fill(value)
    for name, value in (selects or {}).items():
        page.get_by_label(re.compile(rf"^{name}:?$")).select_option(value)
    page.get_by_role("button", name="Queue the job").click()
    # The job's page: every item done, none failed, in view.
    expect(page.locator("#job-status")).to_have_text("done")
    expect(page.locator("#job-status")).to_be_in_viewport()
    expect(page.locator("#progress")).to_contain_text(re.compile(r"\d+ done, 0 failed"))
    # What it made, linked from the job's page, on the first screen.
    expect(page.locator("#job-output")).to_contain_text(f"What it made: {fields['Name']}")
    expect(page.locator("#job-output a")).to_be_in_viewport()


def test_the_kiddie_collection_through_the_report_family_in_chromium(open_as, llm_server, worker_inline, tmp_path):
    shots = Path(os.environ.get("SCREENSHOT_DIR", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)
    truth_file = KIDDIE / "eval" / "kiddie_fake.eval.ir_measures.txt"
    call_command(
        "import_scores", str(truth_file), "--name", "kiddie-truth", "--format", "ir_measures", stdout=StringIO()
    )
    organizer = make_user(Role.ORGANIZER, username="olga")
    assessor = make_user(Role.ASSESSOR, username="pat")

    # The topic page of bee shows its request.
    page = open_as(organizer, "/collection/topics/bee/")
    page.set_viewport_size({"width": 1366, "height": 800})
    expect(page.locator("body")).to_contain_text("bee honey making nectar hive sting")
    problem = page.get_by_text("My 5-year-old loves honey", exact=False).first
    expect(problem).to_be_in_viewport()
    page.screenshot(path=str(shots / "1-topic-bee.png"))

    # Jobs: the LLM's preferences on bee, then PrefNugget's bank from them.
    launch(page, "Preferences (PrefNugget)", {"Name": "llm-prefs", "Topics": "bee"})
    assert PreferenceLabel.objects.filter(source__name="llm-prefs", topic_id="bee").count() == 6
    page.screenshot(path=str(shots / "2-preferences-job.png"))

    # Assessors' work -> Preferences: bee to the assessor, who judges its six pairs by keyboard (here: the lower
    # run number is the better report; the page shows no run), and submits.
    open_menu_link(page, "Preferences")
    page.locator("input[type=checkbox][value='bee']").check()
    page.get_by_label("Assessor").select_option(label="pat")
    page.get_by_role("button", name="Give").click()
    expect(page.locator(".messages li.success")).to_contain_text(re.compile(r"[Gg]iven to pat"))
    comparing = AssessorWork.objects.get(topic_id="bee", kind=PREFERENCE_WORK)
    work_page = open_as(assessor, "/")
    work_page.set_viewport_size({"width": 1366, "height": 800})
    work_page.locator(f"a[href$='/preferences/work/{comparing.pk}/']").first.click()
    for number, (left, right) in enumerate(pair_order(comparing), start=1):
        work_page.wait_for_url(f"**/pair/{number}/")
        work_page.wait_for_function("window.judgePage !== undefined")
        if number == 1:
            expect(work_page.locator("#request-text")).to_be_in_viewport()
            expect(work_page.locator("#report-1 li").first).to_be_in_viewport()
            expect(work_page.locator("#report-2 li").first).to_be_in_viewport()
            work_page.screenshot(path=str(shots / "2-preference-pair.png"))
        runs = runs_of([left, right])
        with work_page.expect_request("**/label/"):
            work_page.keyboard.press("1" if runs[left] < runs[right] else "2")
        settled(work_page)
    submit(work_page)
    page.goto("/collection/leaderboards/borda/?source=people")
    expect(page.locator("table tbody tr td:nth-child(2)")).to_have_text(["run1", "run2", "run3", "run4"])
    expect(page.locator("table tbody tr").first).to_contain_text("3.0000")
    page.screenshot(path=str(shots / "2-borda-people.png"), full_page=True)

    launch(page, "PrefNugget bank", {"Name": "pn-bank", "Topics": "bee"}, {"Preference source": "llm-prefs"})
    llm_bank = [q.text for q in bank_questions("pn-bank")["bee"]]
    assert len(llm_bank) == 10 and all(text.endswith("?") for text in llm_bank)

    # Assessors' work -> Nugget work: the bank of bee, to post-edit.
    open_menu_link(page, "Nugget work")
    page.locator("input[type=checkbox][value='bee']").check()
    page.get_by_label("Assessor").select_option(label="pat")
    page.get_by_label("Condition").select_option("bank_auto_edit")
    # The bank to start from is listed with its provenance: the one counted LLM bank, chosen and shown.
    choice = page.get_by_role("radio", name=re.compile(r"^pn-bank: job \d+, model .+; 10 questions"))
    expect(choice).to_be_checked()
    choice.scroll_into_view_if_needed()
    expect(choice).to_be_in_viewport()
    page.get_by_role("button", name="Give").click()
    expect(page.locator(".messages li.success")).to_contain_text(re.compile(r"[Gg]iven to pat"))
    expect(page.locator("body")).to_contain_text("Question bank post-edit")
    edit = AssessorWork.objects.get(topic_id="bee", nugget_set_name="bank_auto_edit")

    # The assessor opens it from the queue, rewords the first question, adds a gold answer citing a document.
    work_page.goto("/")
    work_page.locator(f"a[href$='/nuggets/work/{edit.pk}/']").first.click()
    expect(work_page.locator("#nugget-list li.nugget")).to_have_count(10)
    expect(work_page.locator("#nugget-list li.nugget").first).to_be_in_viewport()
    work_page.keyboard.press("e")
    work_page.keyboard.press("Control+a")
    work_page.keyboard.type(REWORDED)
    work_page.keyboard.press("Enter")
    work_page.wait_for_function(
        "window.nuggetWorkspace && window.nuggetWorkspace.saves.queue.length === 0"
        " && !window.nuggetWorkspace.saves.sending"
    )
    expect(work_page.locator("#nugget-list li.nugget").first).to_contain_text(REWORDED)
    work_page.keyboard.press("a")
    expect(work_page.locator("#new-answer")).to_be_focused()
    work_page.keyboard.type(GOLD)
    work_page.locator("#answer-documents input[value='Honey']").check()
    work_page.locator("#new-answer").press("Enter")
    expect(work_page.locator(".gold-answer")).to_contain_text(GOLD)
    expect(work_page.locator(".gold-answer").first).to_be_in_viewport()
    work_page.screenshot(path=str(shots / "3-bank-post-edit.png"), full_page=True)
    work_page.get_by_role("button", name="Submit", exact=True).click()
    expect(work_page.locator("#submit-confirm")).to_be_visible()
    work_page.get_by_role("button", name="Submit and freeze").click()
    work_page.wait_for_selector("#nugget-panel[data-frozen='1']")
    edited = bank_questions("bank_auto_edit")["bee"]
    assert [q.text for q in edited] == [REWORDED, *llm_bank[1:]]
    assert edited[0].answers == (GoldAnswer(GOLD, ("Honey",)),)

    # Jobs: the LLM's grades on the post-edited bank; then grading of bee given to the assessor.
    launch(page, "Grades (PrefNugget)", {"Name": "llm-grades"}, {"Bank": "bank_auto_edit"})
    questions = [q.text for q in edited]
    texts = {}
    for row in GradeLabel.objects.filter(source__name="llm-grades").select_related("answer__run", "nugget"):
        texts[row.answer.run.run_id] = row.answer.text
        assert row.label == fake_grade(row.nugget.text, row.answer.text), (row.nugget.text, row.answer.run.run_id)
    assert GradeLabel.objects.filter(source__name="llm-grades").count() == 4 * len(questions) == 40
    open_menu_link(page, "Grading")
    page.locator("input[type=checkbox][value='bee']").check()
    page.get_by_label("Assessor").select_option(label="pat")
    page.get_by_label("Bank").select_option("bank_auto_edit")
    page.get_by_role("button", name="Give").click()
    expect(page.locator(".messages li.success")).to_contain_text(re.compile(r"[Gg]iven to pat"))
    grading = AssessorWork.objects.get(topic_id="bee", kind=GRADE_WORK)

    # The assessor grades with keys: every question of report n gets KEYS[n - 1]; then submits.
    work_page.goto("/")
    work_page.locator(f"a[href$='/grades/work/{grading.pk}/']").first.click()
    for number, key in enumerate(KEYS, start=1):
        work_page.wait_for_url(f"**/report/{number}/")
        work_page.wait_for_function("window.judgePage !== undefined")
        expect(work_page.locator("#rows li.jrow")).to_have_count(len(questions))
        if number == 1:
            expect(work_page.locator("#report-sentences li").first).to_be_in_viewport()
            expect(work_page.locator("#rows li.jrow").first).to_be_in_viewport()
            work_page.screenshot(path=str(shots / "4-grading.png"))
        for _ in questions[1:]:
            press(work_page, key)
        with work_page.expect_request("**/label/"):
            work_page.keyboard.press(key)
        settled(work_page)
    expect(work_page.locator("#all-done")).to_be_visible()
    submit(work_page)
    order = report_order(AssessorWork.objects.get(pk=grading.pk))
    person = {row.answer_id: row.label for row in GradeLabel.objects.filter(work=grading)}
    assert [person[answer] for answer in order] == [int(key) for key in KEYS]

    # The grade leaderboard offers both sources; each shows its runs by avggrade, with the cover4 worked out here.
    page.goto("/collection/leaderboards/grades/?source=llm-grades")
    expect(page.get_by_label("Grade source").locator("option")).to_have_text(["llm-grades", "people"])
    llm = {run: [fake_grade(q, text) for q in questions] for run, text in texts.items()}
    by_person = {answer: [int(key)] * len(questions) for answer, key in zip(order, KEYS, strict=True)}
    people = {run: by_person[answer] for answer, run in runs_of(order).items()}
    for source, grades in [("llm-grades", llm), ("people", people)]:
        page.goto(f"/collection/leaderboards/grades/?source={source}")
        rows = page.locator("table tbody tr")
        ranked = sorted(grades, key=lambda run: -sum(grades[run]))
        expect(rows.locator("td:nth-child(2)")).to_have_text(ranked)
        # A run's mean is over kiddie's five requests, the four without a bank counting 0.
        covers = [f"{sum(g >= 4 for g in grades[run]) / len(questions) / 5:.4f}" for run in ranked]
        expect(rows.locator("td:nth-child(5)")).to_have_text(covers)
        expect(rows.first).to_be_in_viewport()
        page.screenshot(path=str(shots / f"5-grade-leaderboard-{source}.png"), full_page=True)

    # The truth leaderboard page: the LLM's average grade against the kiddie truth, as scipy correlates them.
    page.goto("/metaeval/truth/")
    page.get_by_label("Judged source").select_option("grades:llm-grades")
    page.get_by_label("Truth", exact=True).select_option("scores:kiddie-truth")
    page.get_by_label("Metrics").fill("avggrade=RELEVANCE")
    page.get_by_label("Missing runs").select_option("zero")
    page.get_by_label("Top k (of the truth)").fill("3")
    page.locator("form").filter(has=page.locator("#truth-a")).locator("button[type=submit]").click()
    runs = page.locator("#truth-runs")
    expect(runs).to_be_in_viewport()
    average = {run: sum(fake_grade(q, text) for q in questions) / len(questions) for run, text in texts.items()}
    order_ids = sorted(TRUTH)
    kendall = stats.kendalltau([TRUTH[r] for r in order_ids], [average[r] for r in order_ids]).statistic
    pearson = stats.pearsonr([TRUTH[r] for r in order_ids], [average[r] for r in order_ids]).statistic
    expect(runs).to_contain_text(f"{kendall:.4f}")
    expect(runs).to_contain_text(f"{pearson:.4f}")
    spearman = stats.spearmanr([TRUTH[r] for r in order_ids], [average[r] for r in order_ids]).statistic
    expect(runs).to_contain_text(f"{spearman:.4f}")
    page.screenshot(path=str(shots / "6-truth.png"), full_page=True)

    # The person's Borda counts (3, 1, -1, -3) against the truth: the same order, every rank correlation 1.
    page.get_by_label("Judged source").select_option("preferences:people")
    page.get_by_label("Metrics").fill("borda=RELEVANCE")
    page.locator("form").filter(has=page.locator("#truth-a")).locator("button[type=submit]").click()
    row = page.locator("#truth-runs tbody tr").first
    expect(row).to_contain_text("borda=RELEVANCE")
    pearson = stats.pearsonr([TRUTH[r] for r in order_ids], [3, 1, -1, -3]).statistic
    expect(row.locator("td")).to_have_text(["borda=RELEVANCE", "4", "1.0000", f"{pearson:.4f}", *["1.0000"] * 4])
