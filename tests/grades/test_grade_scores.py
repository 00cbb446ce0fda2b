"""Grade scores worked by hand: a bank of three questions, grades chosen per report, a run's mean with a
missing topic; the leaderboard, the download's layouts, and two sources compared grade by grade."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from assessor.models import LabelSource
from assessor.scoring.kept import scores_refresh
from grades.kinds import GRADES_FAMILY
from grades.measures import report_measures
from grades.models import GradeLabel
from grades.scoring import grade_scores, grade_scores_from_labels
from metaeval.comparison import comparison_build
from nuggets.banks import Question, bank_store
from nuggets.kinds import IMPORT_NUGGETS
from nuggets.models import NuggetSet
from tests.builders import make_answer, make_batch, make_run, make_topic, source_of

pytestmark = pytest.mark.django_db


def test_a_reports_measures_by_hand():
    # Grades 5, 4, 1 on a bank of 3: max 5, sum 10 / 3, two of three at 4 or more.
    measures = report_measures([5, 4, 1], 3)
    assert measures["maxgrade"] == 5 and measures["avggrade"] == pytest.approx(10 / 3)
    assert (measures["cover4"], measures["covered4"]) == (pytest.approx(2 / 3), 2)
    assert (measures["cover5"], measures["cover1"], measures["covered2"]) == (pytest.approx(1 / 3), 1.0, 2)
    # A question without a grade counts 0: grades 3 and 0 of a bank of 3.
    assert report_measures([3, 0], 3)["avggrade"] == 1.0 and report_measures([3, 0], 3)["cover3"] == pytest.approx(
        1 / 3
    )
    # An empty bank: all 0.
    assert set(report_measures([], 0).values()) == {0.0}


def graded_collection() -> dict:
    """Topic t1 with a bank of 3 questions, t2 with 2; runs rA (both topics) and rB (t1 only)."""
    t1, t2 = make_topic("t1"), make_topic("t2")
    ra, rb = make_run("rA"), make_run("rB")
    answers = {("rA", "t1"): make_answer(ra, t1), ("rB", "t1"): make_answer(rb, t1), ("rA", "t2"): make_answer(ra, t2)}
    batch = make_batch(kind=IMPORT_NUGGETS)
    source = source_of("nuggets", "bank", imported_from=batch)
    questions = {}
    for topic, count in (("t1", 3), ("t2", 2)):
        bank = bank_store(
            topic_id=topic,
            name="bank",
            questions=[Question(text=f"{topic} question {n}?") for n in range(count)],
            source=source,
            imported_from=batch,
        )
        questions[topic] = list(bank.nuggets.order_by("position"))
    return {"answers": answers, "questions": questions}


def grade_file(name: str, collection: dict, grades: dict[tuple[str, str], list[int | None]]) -> None:
    batch = make_batch(kind="grades_test")
    source = source_of(GRADES_FAMILY, name, imported_from=batch)
    for (run, topic), given in grades.items():
        answer = collection["answers"][(run, topic)]
        for nugget, grade in zip(collection["questions"][topic], given, strict=True):
            if grade is not None:
                GradeLabel.objects.create(
                    source=source, topic_id=topic, answer=answer, nugget=nugget, label=grade, imported_from=batch
                )
    scores_refresh(family="grades", discover=True)


HAND = {("rA", "t1"): [5, 4, 1], ("rB", "t1"): [3, None, 0], ("rA", "t2"): [4, 2]}


def test_run_means_over_the_sources_topics_a_missing_topic_counting_0():
    grade_file("hand", graded_collection(), HAND)
    scores = grade_scores(name="hand")
    assert scores.topics == ["t1", "t2"] and scores.runs == ["rA", "rB"]
    ra, rb = scores.run_means["rA"], scores.run_means["rB"]
    # rA: t1 max 5, avg 10/3, cover4 2/3 (2 covered); t2 max 4, avg 6/2, cover4 1/2 (1 covered).
    assert ra["maxgrade"] == pytest.approx(4.5)
    assert ra["avggrade"] == pytest.approx((10 / 3 + 3) / 2)
    assert ra["cover4"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert ra["covered4"] == pytest.approx(1.5)
    # rB: t1 max 3, avg 3/3, nothing at 4, one of three at 3; t2 missing, 0.
    assert (rb["maxgrade"], rb["avggrade"], rb["cover4"], rb["covered4"]) == (1.5, 0.5, 0.0, 0.0)
    assert rb["cover3"] == pytest.approx(1 / 6)
    assert scores.per_topic[("rB", "t1")]["avggrade"] == 1.0 and ("rB", "t2") not in scores.per_topic
    # The kept scores are those computed from the labels.
    fresh = grade_scores_from_labels(name="hand").run_means
    assert all(fresh[run] == pytest.approx(scores.run_means[run]) for run in ("rA", "rB"))


def test_a_bank_reopened_for_editing_counts_no_grade():
    collection = graded_collection()
    grade_file("hand", collection, HAND)
    NuggetSet.objects.filter(topic_id="t2").update(status=NuggetSet.Status.OPEN)
    scores = grade_scores_from_labels(name="hand")
    assert scores.topics == ["t1"] and scores.run_means["rA"]["maxgrade"] == 5.0


def test_the_leaderboard_at_a_threshold_and_the_download_with_all_rows(organizer):
    grade_file("hand", graded_collection(), HAND)
    url = reverse("collection:grade_leaderboard")
    page = organizer.get(url + "?source=hand&threshold=3").content.decode()
    table = page.split("<table")[1]
    assert "Grade leaderboard: hand" in page and "cover3" in page and "cover4" not in table
    # In the table: the page's random tokens (its CSRF token) may hold "rB" anywhere before it.
    assert table.index("rA") < table.index("rB")
    download = organizer.get(reverse("collection:download_grade_scores", args=["hand"]) + "?format=tot")
    lines = b"".join(download.streaming_content).decode().splitlines()
    assert "rA\tcover4\tt1\t0.6666666666666666" in lines
    assert "rA\tcover4\tall\t0.5833333333333334" in lines  # (2/3 + 1/2) / 2 = 7/12, rounded once
    assert "rB\tavggrade\tall\t0.5" in lines
    irm = organizer.get(reverse("collection:download_grade_scores", args=["hand"]) + "?format=ir_measures")
    assert "rA\tall\tmaxgrade\t4.5" in b"".join(irm.streaming_content).decode().splitlines()
    one = organizer.get(reverse("collection:download_grade_scores", args=["hand"]) + "?format=trec_eval&run=rB")
    assert "covered4\tall\t0.0" in b"".join(one.streaming_content).decode().splitlines()


def test_two_sources_compared_grade_by_grade_confusion_and_kappa():
    collection = graded_collection()
    grade_file("one", collection, HAND)
    grade_file("two", collection, {("rA", "t1"): [5, 3, 1], ("rB", "t1"): [3, 2, 0], ("rA", "t2"): [4, None]})
    confusion = comparison_build("grades:one", "grades:two", scores=False).confusion
    assert confusion is not None and confusion.labels == ["0", "1", "2", "3", "4", "5"]
    # Both graded six items: (5,5) (4,3) (1,1) (3,3) (0,0) (4,4); "two" graded one "one" did not.
    counts = [[0] * 6 for _ in range(6)]
    for a, b in ((5, 5), (4, 3), (1, 1), (3, 3), (0, 0), (4, 4)):
        counts[a][b] += 1
    assert confusion.counts == counts
    assert (confusion.missing_a, confusion.missing_b) == (1, 1)
    # Cohen's kappa: observed 5/6; chance from the margins (one: 0,1,3,4,4,5; two: 0,1,3,3,4,5).
    observed = 5 / 6
    chance = (1 * 1 + 1 * 1 + 1 * 2 + 2 * 1 + 1 * 1) / 36
    assert confusion.kappa == pytest.approx((observed - chance) / (1 - chance))
    out = StringIO()
    call_command("metaeval", "--a", "grades:one", "--b", "grades:two", "--metric", "cover4", stdout=out)
    assert f"Cohen's kappa {confusion.kappa:.4f}" in out.getvalue()
    assert LabelSource.objects.filter(family=GRADES_FAMILY).count() == 2


def test_the_jsonl_download_in_the_autojudge_tools_layout(organizer):
    """autojudge-evaluate 1.1.0 (eval_results/io.py) reads a jsonl line's run_id, topic_id, measure and value."""
    grade_file("hand", graded_collection(), HAND)
    response = organizer.get(reverse("collection:download_grade_scores", args=["hand"]) + "?format=jsonl&zeros=1")
    assert response["Content-Disposition"] == 'attachment; filename="main.grades.hand.zeros.jsonl"'
    rows = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert all(set(row) == {"run_id", "topic_id", "measure", "value"} for row in rows)
    assert {"run_id": "rB", "topic_id": "t2", "measure": "cover4", "value": 0.0} in rows  # the zero row
    assert {"run_id": "rA", "topic_id": "all", "measure": "maxgrade", "value": 4.5} in rows
    # Per run: its topics' 12 measures (rB's t2 as zeros), then its 12 means.
    assert len(rows) == 2 * (2 * 12 + 12)


def test_the_leaderboard_sorts_by_htmx_and_says_when_there_is_no_source(organizer):
    url = reverse("collection:grade_leaderboard")
    assert "Grade leaderboard: no grade source" in organizer.get(url).content.decode()
    grade_file("hand", graded_collection(), HAND)
    table = organizer.get(url + "?source=hand&sort=maxgrade&dir=asc", HTTP_HX_REQUEST="true").content.decode()
    assert "<h1>" not in table and table.index("rB") < table.index("rA")  # rB's maxgrade 1.5 before rA's 4.5


def test_export_grades_scores_writes_the_score_tsv_with_the_all_rows():
    grade_file("hand", graded_collection(), HAND)
    out, err = StringIO(), StringIO()
    call_command("export_grades", "--name", "hand", "--scores", stdout=out, stderr=err)
    lines = out.getvalue().splitlines()
    assert lines[0] == "run_id\ttopic_id\tmetric\tvalue"
    # Per run: its graded topics' 12 measures, then its 12 means under `all` (rB has no report on t2: no row).
    assert len(lines) == 1 + (2 * 12 + 12) + (12 + 12)
    assert lines[1:3] == ["rA\tt1\tmaxgrade\t5.0", f"rA\tt1\tavggrade\t{10 / 3!r}"]
    assert "rA\tall\tcover4\t0.5833333333333334" in lines  # (2/3 + 1/2) / 2 = 7/12, rounded once
    assert "rB\tt1\tavggrade\t1.0" in lines and "rB\tall\tavggrade\t0.5" in lines  # (3/3 + 0) / 2
    assert not [line for line in lines if line.startswith("rB\tt2\t")]
    assert "1 topic rows of runs that did not answer them are left out" in err.getvalue()
    zeros = StringIO()
    call_command("export_grades", "--name", "hand", "--scores", "--zero-rows", stdout=zeros, stderr=StringIO())
    assert "rB\tt2\tcover4\t0.0" in zeros.getvalue().splitlines()
    # A score file's options are refused on the grades themselves, which are JSONL.
    with pytest.raises(CommandError, match="--format: options of a score file, which only --scores writes"):
        call_command("export_grades", "--name", "hand", "--format", "tot", stdout=StringIO())
    assert json.loads(grade_lines_first("hand"))["grade"] in range(6)


def grade_lines_first(name: str) -> str:
    out = StringIO()
    call_command("export_grades", "--name", name, stdout=out, stderr=StringIO())
    return out.getvalue().splitlines()[0]
