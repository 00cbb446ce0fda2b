"""PrefNugget's grades by an LLM on the kiddie collection: the job, its prompt, its answers read, its command."""

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from assessor.jobs.engine import JobRequestInvalid, job_run_sync
from assessor.models import Answer, Job, LabelSource, LLMCall
from grades.kinds import GRADES_FAMILY
from grades.llm import grades_job_create
from grades.models import GradeLabel
from grades.scoring import grade_scores_from_labels
from metaeval.comparison import comparison_build
from nuggets.banks import question_id
from tests.grades.conftest import BANK, KIDDIE_REQUESTS
from tests.llm_server import Reply
from tests.reports.kiddie import KIDDIE

pytestmark = pytest.mark.django_db
PROMPTS = Path("/work/shared/prompts/prefnugget")
RUNS = ["run1", "run2", "run3", "run4"]
KIDDIE_RUNS_DIR = KIDDIE / "runs" / "repgen"


def stored(name: str) -> dict[tuple[str, str, str], int]:
    rows = GradeLabel.objects.filter(source__name=name).values_list(
        "topic_id", "answer__run__run_id", "nugget__text", "label"
    )
    return {(topic, run, question): grade for topic, run, question, grade in rows}


def overlap_grade(question: str, passage: str) -> int:
    """The fake model's grade, written out: words of four letters or more shared, at most 5."""

    def words(text: str) -> set[str]:
        return {word.lower() for word in re.findall(r"[A-Za-z0-9']+", text) if len(word) >= 4}

    return min(5, len(words(question) & words(passage)))


def test_every_report_is_graded_on_every_question_of_its_topics_bank(llm_server, qbank):
    job = grades_job_create(name="llm", bank="qbank")
    assert job.total_items == 4 * 3 + 4 * 2  # leaf's 3 questions and bee's 2, for each of the four runs
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, llm_server.count) == (Job.Status.DONE, 20, 20)
    texts = {(a.topic_id, a.run.run_id): a.text for a in Answer.objects.select_related("run")}
    expected = {
        (topic, run, question): overlap_grade(question, texts[(topic, run)])
        for topic, questions in BANK.items()
        for run in RUNS
        for question in questions
    }
    grades = stored("llm")
    assert grades == expected
    # Worked by hand: run1's leaf report shares "leaves" and "fall" with the first question, "leaves",
    # "green" and "pigment" with the second.
    assert grades[("leaf", "run1", BANK["leaf"][0])] == 2
    assert grades[("leaf", "run1", BANK["leaf"][1])] == 3
    source = LabelSource.objects.get(family=GRADES_FAMILY, name="llm")
    assert (source.kind, source.job_id) == (LabelSource.Kind.LLM, job.pk)
    label = GradeLabel.objects.filter(source=source).first()
    assert label.job_id == job.pk and label.confidence == 0.9 and "question's words" in label.reasoning


def test_the_prompt_is_the_references_byte_for_byte(llm_server, qbank):
    job = grades_job_create(name="llm", bank="qbank", topics=["leaf"], runs=["run1"])
    job_run_sync(job.pk)
    assert job.prompt_versions == {"prefnugget-grade": 1}
    question = GradeLabel.objects.get(nugget__text=BANK["leaf"][0]).nugget.text
    call = next(c for c in LLMCall.objects.filter(job=job) if question in c.messages[1]["content"])
    system, user = call.messages
    assert system == {"role": "system", "content": (PROMPTS / "pn3_grade.system.txt").read_bytes().decode()}
    assert user == {"role": "user", "content": (PROMPTS / "pn3_grade.user_example.txt").read_bytes().decode()}


def test_a_rerun_under_another_name_calls_nothing(llm_server, qbank):
    job_run_sync(grades_job_create(name="first", bank="qbank").pk)
    calls = llm_server.count
    job_run_sync(grades_job_create(name="second", bank="qbank").pk)
    assert llm_server.count == calls
    assert stored("second") == stored("first")


@pytest.mark.parametrize(
    ("answer", "grade"),
    [
        ("[[ ## grade ## ]]\n4/5\n\n[[ ## confidence ## ]]\n0.9 (high)", 4),
        ("[[ ## grade ## ]]\nGrade: 3\n\n[[ ## confidence ## ]]\n1", 3),
        ("[[ ## grade ## ]]\n7 out of 10\n\n[[ ## confidence ## ]]\n0.5", 0),  # no digit 0-5 alone: 0, as the reference
        ("[[ ## grade ## ]]\n45 then 5\n\n[[ ## confidence ## ]]\n0.5", 5),
    ],
)
def test_the_grade_is_the_first_digit_0_to_5_standing_alone(llm_server, qbank, answer, grade):
    llm_server.script(Reply.literal("[[ ## reasoning ## ]]\nRead.\n\n" + answer))
    job_run_sync(grades_job_create(name="odd", bank="qbank", topics=["bee"], runs=["run1"]).pk)
    first = GradeLabel.objects.get(source__name="odd", nugget__text=BANK["bee"][0])
    assert (first.label, llm_server.count) == (grade, 2)  # the scripted answer read as it came: no re-ask


def test_an_answer_without_a_grade_is_asked_again(llm_server, qbank):
    llm_server.script(
        Reply.literal("I would say it is good."), Reply.literal("[[ ## grade ## ]]\n\n[[ ## completed ## ]]")
    )
    job = grades_job_create(name="odd", bank="qbank", topics=["bee"], runs=["run1"])
    job_run_sync(job.pk, threads=1)
    job.refresh_from_db()
    assert (job.done_items, job.failed_items) == (2, 0)
    assert llm_server.count == 2 + 2  # the first item's two unusable answers, then one good each


def test_graded_documents_give_each_question_its_best_documents_grade(llm_server, qbank):
    job = grades_job_create(name="docs", bank="qbank", topics=["leaf"], runs=["run1"], documents=True)
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert llm_server.count == 3 * 5  # run1's leaf report cites five documents
    label = GradeLabel.objects.get(source__name="docs", nugget__text=BANK["leaf"][1])
    # "What pigment makes leaves green?": Chlorophyll's text has pigment, leaves and green (3), Carotenoid's
    # only leaves ("pigments" is another word).
    assert (label.label, label.document) == (3, "Chlorophyll")


def test_run_grades_dry_run_prints_what_would_be_graded_and_calls_nothing(llm_server, qbank):
    out = StringIO()
    call_command("run_grades", "--dry-run", "--bank", "qbank", "--topics", "bee", "--runs", "run2", "run1", stdout=out)
    assert out.getvalue().splitlines() == [
        f"bee\t{run}\t{question_id(question)}" for run in ("run1", "run2") for question in BANK["bee"]
    ]
    assert (Job.objects.count(), LabelSource.objects.filter(family=GRADES_FAMILY).count(), llm_server.count) == (
        0,
        0,
        0,
    )
    with pytest.raises(CommandError, match="no topic of the selection has a counted bank 'nope'"):
        call_command("run_grades", "--dry-run", "--bank", "nope", stdout=out)
    with pytest.raises(CommandError, match="unknown topic"):
        call_command("run_grades", "--dry-run", "--bank", "qbank", "--topics", "nope", stdout=out)


def test_run_grades_makes_the_job_with_its_options(llm_server, qbank):
    out = StringIO()
    call_command(
        "run_grades", "--name", "cmd", "--bank", "qbank", "--runs", "run3", "--sync", "--threads", "1", stdout=out
    )
    job = Job.objects.get(output_name="cmd")
    assert job.params == {"bank": "qbank", "runs": ["run3"], "topics": [], "documents": False, "queue": ""}
    assert f"job {job.pk} done: 5/5 items" in out.getvalue()
    with pytest.raises(JobRequestInvalid, match="already produces 'cmd'"):
        grades_job_create(name="cmd", bank="qbank")


def test_an_organizer_launches_grades_from_the_jobs_page(organizer, llm_server, qbank, worker_inline):
    launch = organizer.get(reverse("jobs:launch", args=["question_grading"])).content.decode()
    assert '<option value="qbank">' in launch
    assert "manage.py run_grades --bank BANK --name NAME" in launch
    response = organizer.post(
        reverse("jobs:launch", args=["question_grading"]),
        {"name": "page-grades", "bank": "qbank", "topics": "bee", "runs": "run1", "documents": "on"},
    )
    job = Job.objects.get(output_name="page-grades")
    assert response.status_code == 302 and worker_inline == [job.pk]
    assert job.params["documents"] is True and job.total_items == 2
    assert GradeLabel.objects.filter(source__name="page-grades").exclude(document="").count() == 2


def test_grades_count_once_their_job_is_finished(llm_server, qbank):
    job = grades_job_create(name="llm", bank="qbank", topics=["bee"])
    job_run_sync(job.pk)
    counted = grade_scores_from_labels(name="llm")
    # Means over every request; the rows are bee's, the one topic graded.
    assert counted.topics == KIDDIE_REQUESTS and {topic for _, topic in counted.per_topic} == {"bee"}
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING)
    with pytest.raises(LookupError):
        grade_scores_from_labels(name="llm")


def test_a_flipped_model_grades_5_minus_the_grade_and_the_crosstab_shows_it(two_llm_endpoints, qbank):
    job_run_sync(grades_job_create(name="alpha", bank="qbank", endpoint="alpha").pk)
    job_run_sync(grades_job_create(name="beta", bank="qbank", endpoint="beta").pk)
    alpha, beta = stored("alpha"), stored("beta")
    assert beta == {key: 5 - grade for key, grade in alpha.items()}
    confusion = comparison_build("grades:alpha", "grades:beta", scores=False).confusion
    counts = [[0] * 6 for _ in range(6)]
    for grade in alpha.values():
        counts[grade][5 - grade] += 1
    assert confusion.counts == counts and sum(map(sum, counts)) == 20


def kiddie_report(run: str, topic: str) -> tuple[str, dict[str, str]]:
    """A report's text (its sentences joined by one space) and its cited documents' texts, from the run file."""
    for line in (KIDDIE_RUNS_DIR / f"{run}.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["metadata"]["topic_id"] == topic:
            text = " ".join(sentence["text"] for sentence in record["responses"])
            cited = [doc for sentence in record["responses"] for doc in sentence["citations"]]
            return text, {doc: record["documents"][doc]["text"] for doc in cited}
    raise AssertionError(f"no {run} report on {topic}")


def sent_passages(job) -> dict[str, list[str]]:
    """The passages the job's prompts carried, by question, in the order sent."""
    sent: dict[str, list[str]] = {}
    for call in LLMCall.objects.filter(job=job).order_by("pk"):
        user = call.messages[1]["content"]
        question = re.search(r"\[\[ ## question ## \]\]\n(.*?)\n\n\[\[ ## passage", user, re.S)
        passage = re.search(r"\[\[ ## passage ## \]\]\n(.*?)\n\nRespond with", user, re.S)
        assert question and passage
        sent.setdefault(question.group(1), []).append(passage.group(1))
    return sent


def test_a_report_graded_with_its_documents_past_the_gate(llm_server, qbank):
    """The starter kit's `grade_text: response_and_documents`: the report graded; where its grade reaches the gate,
    each cited document too; a question scores the report's grade times its best document's (0-25), covered at
    T x 5."""
    job = grades_job_create(
        name="both", bank="qbank", topics=["leaf"], runs=["run1"], report_and_documents=True, gate=3
    )
    assert (job.params["report_and_documents"], job.params["gate"], job.params["documents"]) == (True, 3, False)
    job_run_sync(job.pk)
    report, documents = kiddie_report("run1", "leaf")
    assert len(documents) == 5
    report_grades = {q: overlap_grade(q, report) for q in BANK["leaf"]}
    gated = [q for q in BANK["leaf"] if report_grades[q] >= 3]
    # Worked by hand: "What pigment makes leaves green?" is graded 3 on the report, the other two below 3.
    assert gated == [BANK["leaf"][1]]
    sent = sent_passages(job)
    for question in BANK["leaf"]:
        # The report's text for every question; the cited documents' texts, in citation order, past the gate only.
        assert sent[question] == [report, *(documents.values() if question in gated else [])]
    assert llm_server.count == 3 + 5 * len(gated)
    labels = {g.nugget.text: g for g in GradeLabel.objects.filter(source__name="both").select_related("nugget")}
    document_grades = {q: max(overlap_grade(q, text) for text in documents.values()) for q in gated}
    for question, label in labels.items():
        assert label.label == report_grades[question]
        assert label.document_grade == document_grades.get(question, 0)
    # Chlorophyll's text has pigment, leaves and green: 3, the first document reaching the highest grade.
    assert (labels[BANK["leaf"][1]].document, labels[BANK["leaf"][1]].document_grade) == ("Chlorophyll", 3)
    assert labels[BANK["leaf"][0]].document == ""
    # Scores on 0-25: question grades 0, 3 x 3 = 9, 0 on a bank of 3.
    row = grade_scores_from_labels(name="both").per_topic[("run1", "leaf")]
    assert (row["maxgrade"], row["avggrade"]) == (9.0, 3.0)
    assert (row["cover1"], row["covered1"], row["cover2"], row["cover4"]) == (pytest.approx(1 / 3), 1.0, 0.0, 0.0)
    exported = [json.loads(line) for line in export_lines("both")]
    assert [(r["grade"], r["doc_id"], r["document_id"], r["document_grade"]) for r in exported] == [
        (report_grades[q], None, labels[q].document or None, labels[q].document_grade) for q in BANK["leaf"]
    ]
    assert {r["passage"] for r in exported} == {report}


def test_grading_documents_instead_of_the_report_and_with_it_is_refused(llm_server, qbank):
    with pytest.raises(JobRequestInvalid, match="not both"):
        grades_job_create(name="x", bank="qbank", documents=True, report_and_documents=True)
    with pytest.raises(JobRequestInvalid, match="the gate is a grade from 0 to 5, not 6"):
        grades_job_create(name="x", bank="qbank", report_and_documents=True, gate=6)
    assert not Job.objects.exists()


def export_lines(name: str) -> list[str]:
    out = StringIO()
    call_command("export_grades", "--name", name, stdout=out, stderr=StringIO())
    return out.getvalue().splitlines()


def test_the_launch_form_grades_the_report_with_its_documents(organizer, llm_server, qbank, worker_inline):
    form = {"name": "page-both", "bank": "qbank", "topics": "bee", "runs": "run1", "report_and_documents": "on"}
    organizer.post(reverse("jobs:launch", args=["question_grading"]), {**form, "gate": "2"})
    job = Job.objects.get(output_name="page-both")
    assert (job.params["report_and_documents"], job.params["gate"], worker_inline) == (True, 2, [job.pk])
    assert GradeLabel.objects.filter(source__name="page-both", document_grade__isnull=False).count() == 2
    page = organizer.get(reverse("collection:grade_leaderboard") + "?source=page-both").content.decode()
    assert '<span id="covered-at">20</span> or more' in page and "0 to 25" in page  # 0-25 grades, cover4 at 20
    organizer.post(reverse("jobs:launch", args=["question_grading"]), {**form, "name": "page-gate", "gate": ""})
    assert Job.objects.get(output_name="page-gate").params["gate"] == 4  # the reference's grade_threshold
