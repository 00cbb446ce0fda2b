"""The report family in two campaigns: the kiddie requests, reports, a question bank, grades, ARGUE-style
judgments and preferences imported into each stand side by side; each campaign's exports write the ids of the
input files; an id holding "@" is refused by file, line and field; an LLM job of one campaign sees only its own.

Every expectation is read from the input files here (the ids they give), never from what the code writes."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from argue.models import JudgedReport, SupportAttestation
from assessor.campaigns.services import campaign_create
from assessor.jobs.engine import JobRequestInvalid, job_run_sync
from assessor.models import Answer, Campaign, Job, JobItem, LabelSource, Run, Topic
from assessor.models.keys import topic_key
from assessor.models.scope import campaign_first, campaign_scope
from crucible.llm import _request_check, crucible_job_create
from crucible.models import CrucibleRun
from grades.kinds import GRADES, GRADES_FAMILY
from grades.models import GradeLabel
from nuggets.banks import Answer as GoldAnswer
from nuggets.banks import Question, bank_store
from nuggets.kinds import IMPORT_NUGGETS
from preferences.models import PreferenceLabel
from reports.models import ReportLayout, ReportRequest
from tests.builders import make_batch, source_of
from tests.grades.conftest import BANK, store_bank
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

pytestmark = pytest.mark.django_db

GRADED_RUNS = ("run1", "run2")
JUDGED_RUN = "run2"
# ARGUE-style scores count questions with gold answers: a bank of one such question on two requests.
GOLD = {
    "leaf": Question("What makes leaves green?", importance="vital", rule="or", answers=(GoldAnswer("chlorophyll"),)),
    "bee": Question("How do bees make honey?", importance="vital", rule="or", answers=(GoldAnswer("from nectar"),)),
}


def gold_store() -> None:
    """The bank `gold` on the campaign in effect's leaf and bee."""
    batch = make_batch(kind=IMPORT_NUGGETS)
    source = source_of("nuggets", "gold", imported_from=batch)
    for topic, question in GOLD.items():
        bank_store(topic_id=topic_key(topic), name="gold", questions=[question], source=source, imported_from=batch)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def written(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def out(*args, **options) -> str:
    stdout = StringIO()
    call_command(*args, stdout=stdout, stderr=StringIO(), **options)
    return stdout.getvalue()


def tsv_topics(text: str) -> set[str]:
    """The topic column of a score TSV (run_id, topic_id, metric, value, with a header)."""
    rows = [line.split("\t") for line in text.splitlines()[1:] if line]
    return {topic for _, topic, _, _ in rows}


# --- the input files, and the ids they give ------------------------------------------------------------------

REQUEST_IDS = {record["request_id"] for record in records(KIDDIE_TOPICS)}
REPORTS = {
    (record["metadata"]["run_id"], record["metadata"]["topic_id"]): record
    for path in KIDDIE_RUNS
    for record in records(path)
}


def grade_rows() -> list[dict]:
    """A grade of each banked request's reports of run1 and run2 on each question (grades 0 to 4, by position)."""
    return [
        {"run_id": run, "query_id": topic, "nugget_id": question, "grade": position % 5}
        for topic, questions in BANK.items()
        for run in GRADED_RUNS
        if (run, topic) in REPORTS
        for position, question in enumerate(questions)
    ]


def argue_rows() -> list[dict]:
    """run2's reports on the gold bank's requests: their first sentence's first citation supports it, and it
    gives the question's gold answer."""
    rows = []
    for topic, question in GOLD.items():
        report = REPORTS.get((JUDGED_RUN, topic))
        if report is None:
            continue
        cited = report["responses"][0]["citations"]
        docid = cited[0] if isinstance(cited, list) else next(iter(cited))
        rows.append(
            {
                "run_id": JUDGED_RUN,
                "topic_id": topic,
                "sentences": [
                    {
                        "index": 0,
                        "citations": [{"docid": docid, "supports": "yes"}],
                        "answers": [{"question_id": question.text, "answer_index": 0, "agrees": "yes"}],
                    }
                ],
            }
        )
    return rows


def preference_rows() -> list[dict]:
    """run1 over run2 on every request both answered."""
    topics = sorted(topic for run, topic in REPORTS if run == "run1" and ("run2", topic) in REPORTS)
    return [
        {"_type": "comparison", "run_id": "run1", "run_id2": "run2", "query_id": topic, "better_passage": 1}
        for topic in topics
    ]


def collection_import(campaign: Campaign, folder: Path) -> None:
    """The same files into `campaign`, by its commands' --campaign."""
    slug = campaign.slug
    out("import_requests", str(KIDDIE_TOPICS), campaign=slug)
    out("import_reports", *map(str, KIDDIE_RUNS), campaign=slug)
    with campaign_scope(campaign):
        store_bank("qbank", {topic_key(topic): questions for topic, questions in BANK.items()})
        gold_store()
    grades = written(folder / "grades.jsonl", grade_rows())
    argue = written(folder / "argue.jsonl", argue_rows())
    checkpoint = written(folder / "checkpoint.jsonl", preference_rows())
    out("import_grades", str(grades), "--name", "g", "--bank", "qbank", campaign=slug)
    out("import_argue", str(argue), "--name", "a", "--bank", "gold", campaign=slug)
    out("import_preferences", str(checkpoint), "--name", "p", campaign=slug)


@pytest.fixture
def main(db) -> Campaign:
    return campaign_first()


@pytest.fixture
def both(main, tmp_path) -> tuple[Campaign, Campaign]:
    """The kiddie collection and its labels in the first campaign and in a second one, "b"."""
    b = campaign_create(slug="b", title="B", families=["reports"])
    collection_import(main, tmp_path)
    collection_import(b, tmp_path)
    return main, b


# --- side by side --------------------------------------------------------------------------------------------


def counts() -> dict[str, int]:
    return {
        "topics": Topic.objects.count(),
        "requests": ReportRequest.objects.count(),
        "runs": Run.objects.count(),
        "reports": Answer.objects.filter(run__in=Run.objects.all()).count(),
        "layouts": ReportLayout.objects.filter(answer__run__in=Run.objects.all()).count(),
        "grades": GradeLabel.objects.count(),
        "judged": JudgedReport.objects.count(),
        "supports": SupportAttestation.objects.count(),
        "preferences": PreferenceLabel.objects.count(),
        "sources": LabelSource.objects.count(),
    }


def test_the_same_files_in_two_campaigns_stand_side_by_side(both):
    main, b = both
    grades, judged, preferred = len(grade_rows()), len(argue_rows()), len(preference_rows())
    expected = {
        "topics": len(REQUEST_IDS),
        "requests": len(REQUEST_IDS),
        "runs": len({run for run, _ in REPORTS}),
        "reports": len(REPORTS),
        "layouts": len(REPORTS),
        "grades": grades,
        "judged": judged,
        "supports": judged,
        "preferences": preferred,
        "sources": 5,  # the two banks', the grades', the judgments', the preferences'
    }
    assert grades and judged and preferred  # the files hold something to compare
    for campaign in (main, b):
        with campaign_scope(campaign):
            assert counts() == expected, campaign.slug
            assert set(Topic.objects.values_list("pk", flat=True)) == {topic_key(i, campaign) for i in REQUEST_IDS}
    assert Topic.objects.unscoped().count() == 2 * len(REQUEST_IDS)
    assert Run.objects.unscoped().filter(run_id="run1").count() == 2
    # A label of b is on b's reports and topics only.
    with campaign_scope(b):
        assert {label.topic_id for label in GradeLabel.objects.all()} == {f"{topic}@b" for topic in BANK}
        assert {label.answer.run.campaign_id for label in GradeLabel.objects.select_related("answer__run")} == {b.pk}


# --- exports -----------------------------------------------------------------------------------------------


def test_each_campaigns_exports_write_the_input_files_ids(both):
    main, b = both
    exported: dict[str, dict[str, str]] = {}
    for campaign in (main, b):
        slug = campaign.slug
        files = {
            "requests": out("export_requests", campaign=slug),
            "reports": out("export_reports", campaign=slug),
            "grades": out("export_grades", "--name", "g", campaign=slug),
            # From the labels (--include-open); the kept scores are the next test's.
            "grade scores": out("export_grades", "--name", "g", "--scores", "--include-open", campaign=slug),
            "argue": out("export_argue", "--name", "a", campaign=slug),
            "argue scores": out("export_argue", "--name", "a", "--scores", "--include-open", campaign=slug),
            "preferences": out("export_preferences", "--name", "p", campaign=slug),
        }
        exported[slug] = files
        lines = {
            name: [json.loads(line) for line in text.splitlines()]
            for name, text in files.items()
            if "scores" not in name
        }
        assert {r["request_id"] for r in lines["requests"]} == REQUEST_IDS
        assert {(r["metadata"]["run_id"], r["metadata"]["topic_id"]) for r in lines["reports"]} == set(REPORTS)
        assert {(r["run_id"], r["query_id"]) for r in lines["grades"]} == {
            (r["run_id"], r["query_id"]) for r in grade_rows()
        }
        assert {(r["run_id"], r["topic_id"]) for r in lines["argue"]} == {
            (r["run_id"], r["topic_id"]) for r in argue_rows()
        }
        comparisons = [r for r in lines["preferences"] if r["_type"] == "comparison"]
        aggregates = [r for r in lines["preferences"] if r["_type"] == "aggregate"]
        assert {r["query_id"] for r in comparisons} == {r["query_id"] for r in preference_rows()}
        assert {r["topic_id"] for r in aggregates} == {r["query_id"] for r in preference_rows()}
        # The scores: the graded and judged requests, and the runs' means under "all".
        assert tsv_topics(files["grade scores"]) - {"all"} <= REQUEST_IDS
        assert {r["query_id"] for r in grade_rows()} <= tsv_topics(files["grade scores"])
        assert tsv_topics(files["argue scores"]) - {"all"} <= REQUEST_IDS
        assert {r["topic_id"] for r in argue_rows()} <= tsv_topics(files["argue scores"])
        assert "@" not in "".join(files.values())
    # The same files in, the same files out, whichever campaign.
    assert exported["main"] == exported["b"]


def test_each_campaigns_kept_scores_are_its_own(both):
    kept = {
        slug: (
            out("export_grades", "--name", "g", "--scores", campaign=slug),
            out("export_argue", "--name", "a", "--scores", campaign=slug),
        )
        for slug in ("main", "b")
    }
    assert kept["main"] == kept["b"]
    graded = {r["query_id"] for r in grade_rows()}
    assert tsv_topics(kept["main"][0]) == graded | {"all"}


# --- an id holding "@" ---------------------------------------------------------------------------------------


def refusal(command: str, path: Path, *options: str) -> str:
    with pytest.raises(CommandError) as refused:
        out(command, str(path), *options)
    return str(refused.value)


def test_an_id_holding_the_key_separator_is_refused_by_file_line_and_field(main, tmp_path):
    requests = records(KIDDIE_TOPICS)
    requests[1]["request_id"] = "cloud@b"
    path = written(tmp_path / "requests.jsonl", requests)
    message = refusal("import_requests", path)
    assert f"{path}, line 2, field 'request_id'" in message and "'@'" in message
    assert not Topic.objects.exists()  # nothing half-written

    out("import_requests", str(KIDDIE_TOPICS))
    reports = records(KIDDIE_RUNS[0])
    reports[2]["metadata"]["topic_id"] = "bee@main"
    path = written(tmp_path / "reports.jsonl", reports)
    assert f"{path}, line 3, field 'metadata.topic_id'" in refusal("import_reports", path)
    assert not Answer.objects.exists()

    for command, key, rows, options in (
        ("import_grades", "query_id", grade_rows(), ("--name", "g", "--bank", "qbank")),
        ("import_argue", "topic_id", argue_rows(), ("--name", "a", "--bank", "gold")),
        ("import_preferences", "query_id", preference_rows(), ("--name", "p")),
    ):
        rows[-1][key] = "leaf@b"
        path = written(tmp_path / f"{command}.jsonl", rows)
        assert f"{path}, line {len(rows)}, field '{key}'" in refusal(command, path, *options), command


# --- jobs and run names ----------------------------------------------------------------------------------------


def test_an_llm_job_of_campaign_b_grades_b_s_reports_into_a_source_of_b(llm_server, both):
    main, b = both
    out("run_grades", "--name", "llm", "--bank", "qbank", "--sync", "--threads", "1", campaign="b")
    job = Job.objects.unscoped().get(kind=GRADES)
    assert job.campaign_id == b.pk
    # Each banked request's four reports on each of its questions: b's, not main's too.
    questions = sum(len(texts) for texts in BANK.values())
    runs = len({run for run, _ in REPORTS})
    assert job.total_items == questions * runs
    assert {item.key.split("|", 1)[0] for item in JobItem.objects.filter(job=job)} == {f"{t}@b" for t in BANK}
    source = LabelSource.objects.unscoped().get(family=GRADES_FAMILY, name="llm")
    assert source.campaign_id == b.pk
    labels = GradeLabel.objects.unscoped().filter(source=source).select_related("answer__run")
    assert labels.count() == questions * runs
    assert {label.answer.run.campaign_id for label in labels} == {b.pk}
    with campaign_scope(main):
        assert not LabelSource.objects.filter(name="llm").exists()
        assert GradeLabel.objects.count() == len(grade_rows())


def test_a_dry_run_in_campaign_b_names_b_s_requests_as_its_files_do(both):
    planned = out("run_grades", "--dry-run", "--bank", "qbank", "--topics", "bee", "--runs", "run1", campaign="b")
    assert [line.split("\t")[:2] for line in planned.splitlines()] == [["bee", "run1"]] * len(BANK["bee"])


def test_a_crucible_run_name_is_taken_only_in_its_own_campaign(both):
    main, b = both
    empty = campaign_create(slug="c", title="C", families=["reports"])
    for campaign in (main, b):
        with campaign_scope(campaign), pytest.raises(JobRequestInvalid, match="run1"):
            _request_check(name="run1", variant="abstractive", length="short")
    with campaign_scope(empty):
        assert _request_check(name="run1", variant="abstractive", length="short") == "abstractive"


def test_a_crucible_job_of_campaign_b_stores_its_run_on_b_s_requests(llm_server, both):
    main, b = both
    with campaign_scope(b):
        job = crucible_job_create(name="crux", bank="qbank")
    job_run_sync(job.pk)
    crucible = CrucibleRun.objects.unscoped().get(job=job)
    assert crucible.error == ""
    run = Run.objects.unscoped().get(run_id="crux")
    assert run.campaign_id == b.pk == crucible.run.campaign_id
    assert set(Answer.objects.filter(run=run).values_list("topic_id", flat=True)) == {f"{t}@b" for t in BANK}
    exported = out("export_reports", "--run", "crux", campaign="b")
    assert {json.loads(line)["metadata"]["topic_id"] for line in exported.splitlines()} == set(BANK)
    with campaign_scope(main):
        assert not Run.objects.filter(run_id="crux").exists()
