"""Each leaderboard of the report family draws its runs' means with their intervals above the table, in
Chromium at 1366x768: the plot on the first screen, one mark a run, top to bottom in the table's order."""

import os
from pathlib import Path

import pytest
from django.urls import reverse

from argue.llm import argue_job_create
from assessor.jobs.engine import job_run_sync
from assessor.work.roles import Role
from grades.llm import grades_job_create
from nuggets.banks import Question, bank_store
from nuggets.kinds import IMPORT_NUGGETS
from preferences.llm import preferences_job_create
from reports.importing import reports_import, requests_import
from tests.argue.flow import flow_collection_make
from tests.builders import make_batch, make_user, source_of
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SCREEN = {"width": 1366, "height": 768}
CAPTION = "95% bootstrap percentile interval"


def plot_follows_the_table(page, shot: Path, *, table_in_view: bool = True) -> list[str]:
    """The plot in view with one mark a run, top to bottom in the order of the table's runs; those runs.
    `table_in_view`: the table's first row is on the first screen too."""
    plot = page.locator("#run-plot")
    expect(plot).to_be_in_viewport()
    expect(plot.locator("figcaption")).to_contain_text(CAPTION)
    runs = page.locator("table tbody tr td:nth-child(2)").all_inner_texts()
    assert len(runs) >= 2, runs
    marks = plot.locator("g.run-mark")
    expect(marks).to_have_count(len(runs))
    assert [mark.get_attribute("data-run") for mark in marks.all()] == runs
    tops = []
    for mark in marks.all():
        expect(mark).to_be_in_viewport()
        box = mark.bounding_box()
        assert box is not None and box["y"] + box["height"] <= SCREEN["height"]
        tops.append(box["y"])
    assert tops == sorted(tops) and len(set(tops)) == len(tops), tops  # one row a run, the table's first on top
    if table_in_view:  # the plot above the table leaves the table's best run on the first screen too
        expect(page.locator("table tbody tr").first).to_be_in_viewport(ratio=1)
    page.screenshot(path=str(shot))
    return runs


def shots_dir(tmp_path: Path) -> Path:
    shots = Path(os.environ.get("SCREENSHOT_DIR", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def test_the_borda_and_grade_leaderboards_plot_each_runs_mean_in_the_tables_order(open_as, llm_server, tmp_path):
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)
    job_run_sync(preferences_job_create(name="llm-prefs").pk)
    batch = make_batch(kind=IMPORT_NUGGETS)
    source = source_of("nuggets", "qbank", imported_from=batch)
    for topic, texts in {
        "bee": ["How do bees make honey from nectar?", "Why do bees sting?"],
        "leaf": ["Why do leaves change colour in autumn?", "What is chlorophyll?"],
    }.items():
        questions = [Question(text=text) for text in texts]
        bank_store(topic_id=topic, name="qbank", questions=questions, source=source, imported_from=batch)
    job_run_sync(grades_job_create(name="llm-grades", bank="qbank", topics=["bee", "leaf"]).pk)
    page = open_as(make_user(Role.ORGANIZER), reverse("collection:borda_leaderboard") + "?source=llm-prefs")
    page.set_viewport_size(SCREEN)
    runs = plot_follows_the_table(page, shots_dir(tmp_path) / "borda-plot.png")
    assert sorted(runs) == ["run1", "run2", "run3", "run4"]
    page.goto(reverse("collection:grade_leaderboard") + "?source=llm-grades")
    runs = plot_follows_the_table(page, shots_dir(tmp_path) / "grade-plot.png")
    assert sorted(runs) == ["run1", "run2", "run3", "run4"]


def test_the_argue_style_leaderboard_plots_each_runs_mean_in_the_tables_order(open_as, llm_server, tmp_path):
    flow_collection_make()
    job_run_sync(argue_job_create(name="llm", bank="gold").pk)
    page = open_as(make_user(Role.ORGANIZER), reverse("collection:argue_leaderboard") + "?source=llm")
    page.set_viewport_size(SCREEN)
    # The scored topics are f1, f2, f4, f5 (f3's bank has no gold answer). A's F1: 1/2 on f1 and 1 on f2
    # (tests/argue/test_argue_flow.py works them by hand), 0 on f4 and f5 (their one sentence cites nothing):
    # 3/8. B's: 1 on f1, no report elsewhere (0): 1/4. A above B.
    # (Its table starts below the first screen, plot or not: the source's notes and the measures' explanation
    # come first.)
    assert plot_follows_the_table(page, shots_dir(tmp_path) / "argue-plot.png", table_in_view=False) == ["A", "B"]
    titles = page.locator("#run-plot g.run-mark title").all_text_contents()
    assert [title.split(",")[0] for title in titles] == ["A: mean 0.3750", "B: mean 0.2500"]
