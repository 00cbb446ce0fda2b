"""ARGUE-style judgments by an LLM on the hand-made collection (tests/argue/conftest.py): the cut, the gating,
the calls, the stored judgments, the scores worked out by hand, the leaderboard and the downloads."""

import hashlib
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from argue.llm import argue_job_create
from argue.metrics import COUNTS, MICRO, RATIOS
from argue.models import AnswerAttestation, JudgedReport, SupportAttestation
from argue.scoring import argue_scores, argue_scores_from_labels, notes
from assessor.jobs.engine import JobRequestInvalid, job_run_sync
from assessor.models import Job, LabelSource, LLMCall
from nuggets.models import Nugget
from tests.builders import read_scores_tsv
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


def supports(name: str) -> dict[tuple[str, int, str], bool | None]:
    rows = SupportAttestation.objects.filter(source__name=name).values_list(
        "citation__sentence__answer__run__run_id", "citation__sentence__index", "citation__segment_id", "label"
    )
    return {(run, index, docid): label == "yes" for run, index, docid, label in rows}


def agreements(name: str) -> dict[tuple[str, str, int, str, int], bool]:
    rows = AnswerAttestation.objects.filter(source__name=name).values_list(
        "sentence__answer__run__run_id",
        "sentence__answer__topic_id",
        "sentence__index",
        "question__text",
        "answer_index",
        "label",
    )
    return {
        (run, topic, index, question, answer): label == "yes" for run, topic, index, question, answer, label in rows
    }


def test_each_kept_sentence_is_judged_on_its_citations_and_the_answers_of_what_it_cites(llm_server, argue_collection):
    job = argue_job_create(name="llm", bank="gold")
    assert job.total_items == 3
    job_run_sync(job.pk)
    job.refresh_from_db()
    # t1/A: 3 citations + 4 gated answers (s0 cites d1, d3: Ann, May, June, asked though d3 does not support s0;
    # s1 cites d2: Bob); s2, which cites nothing, is cut: nothing asked of it. t2/A: 1 citation + 1 answer. t1/B:
    # empty, no call.
    assert (job.status, job.done_items, llm_server.count) == (Job.Status.DONE, 3, 9)
    assert supports("llm") == {("A", 0, "d1"): True, ("A", 0, "d3"): False, ("A", 1, "d2"): True, ("A", 0, "d4"): True}
    assert agreements("llm") == {
        ("A", "t1", 0, "Who led the team?", 0): True,
        ("A", "t1", 0, "When did it start?", 0): True,
        ("A", "t1", 0, "When did it start?", 1): False,
        ("A", "t1", 1, "Who led the team?", 1): True,
        ("A", "t2", 0, "What sound do cats make?", 0): True,
    }
    kept = dict(JudgedReport.objects.values_list("answer_id", "kept"))
    assert kept == {argue_collection.a_t1.pk: 2, argue_collection.a_t2.pk: 1, argue_collection.b_t1.pk: 0}
    source = LabelSource.objects.get(family="argue", name="llm")
    assert (source.kind, source.job_id) == (LabelSource.Kind.LLM, job.pk)
    assert JudgedReport.objects.filter(job=job).count() == 3
    systems = {call.messages[0]["content"].split(",")[0] for call in LLMCall.objects.filter(job=job)}
    assert systems == {"You are ArgueCitationJudge", "You are ArgueAnswerJudge"}
    # The checks of uncited sentences are the job's prompts too (negative assertions only with the option).
    assert job.prompt_versions == {
        "argue-citation-support-v1": 1,
        "argue-answer-agreement-v1": 1,
        "argue-needs-citation-v1": 1,
        "argue-first-instance-v1": 1,
    }


def test_the_scores_of_a_judged_source_worked_by_hand(llm_server, argue_collection):
    job_run_sync(argue_job_create(name="llm", bank="gold").pk)
    scores = argue_scores_from_labels(name="llm")
    assert scores.topics == ["t1", "t2"]
    a_t1 = scores.per_topic[("A", "t1")]
    # citing sentences 2, supported 1 (s0's d3 does not): s0 is penalized, so its Ann and May earn nothing;
    # covered q0 (OR) by s1's Bob, not q1 (AND: nothing rewarded states May or June)
    assert a_t1["sentence_support"] == pytest.approx(0.5)
    assert a_t1["citation_support"] == pytest.approx(2 / 3)
    assert a_t1["citation_relevance"] == 1.0  # d1, d3, d2 all support a gold answer
    assert a_t1["nugget_coverage"] == pytest.approx(0.5)
    assert a_t1["weighted_coverage"] == pytest.approx(2 / 3)
    assert a_t1["f1"] == pytest.approx(0.5)
    assert a_t1["weighted_f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert {scores.per_topic[("A", "t2")][name] for name in RATIOS} == {1.0}
    # an empty report: 0 throughout, but for its topic's 2 kept questions
    assert {scores.per_topic[("B", "t1")][name] for name in RATIOS + COUNTS if name != "questions"} == {0.0}
    # Run means over t1 and t2; B has no report on t2 (0).
    assert scores.run_means["A"]["f1"] == pytest.approx((0.5 + 1) / 2)
    assert scores.run_means["A"]["weighted_f1"] == pytest.approx((4 / 7 + 1) / 2)
    assert {scores.run_means["B"][name] for name in RATIOS + MICRO} == {0.0}
    # The kept scores (what the leaderboard reads) equal the scores from the labels.
    kept = argue_scores(name="llm")
    for run in ("A", "B"):
        assert kept.run_means[run] == pytest.approx(scores.run_means[run])


def test_check_all_asks_every_gold_answer_of_each_kept_sentence(llm_server, argue_collection):
    job = argue_job_create(name="all", bank="gold", topics=["t1"], runs=["A"], check_all=True)
    job_run_sync(job.pk)
    # 3 citations + 2 kept sentences x 4 answers
    assert llm_server.count == 3 + 8
    said = agreements("all")
    assert len(said) == 8 and [key for key, yes in said.items() if yes] == [
        ("A", "t1", 0, "Who led the team?", 0),
        ("A", "t1", 0, "When did it start?", 0),
        ("A", "t1", 1, "Who led the team?", 1),
    ]
    # "June was cold." would cover q1 under check_all, but the limit cut it.
    assert argue_scores_from_labels(name="all").per_topic[("A", "t1")]["nugget_coverage"] == pytest.approx(0.5)


def test_an_answer_without_its_field_is_asked_again_and_one_that_is_neither_is_no(llm_server, argue_collection):
    llm_server.script(
        Reply.literal("It supports it."),
        Reply.literal("[[ ## reasoning ## ]]\nRead.\n\n[[ ## supports ## ]]\nperhaps"),
    )
    job = argue_job_create(name="odd", bank="gold", topics=["t2"])
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.done_items, job.failed_items, llm_server.count) == (1, 0, 3)
    assert supports("odd") == {("A", 0, "d4"): False}


def test_a_flipped_model_says_the_opposite(two_llm_endpoints, argue_collection):
    job_run_sync(argue_job_create(name="flip", bank="gold", topics=["t2"], endpoint="beta").pk)
    assert supports("flip") == {("A", 0, "d4"): False}


def test_the_leaderboard_and_the_downloads(llm_server, argue_collection, organizer):
    job_run_sync(argue_job_create(name="llm", bank="gold").pk)
    page = organizer.get(reverse("collection:argue_leaderboard") + "?source=llm").content.decode()
    assert "ARGUE-style leaderboard: llm" in page and page.index(">A<") < page.index(">B<")
    download = organizer.get(reverse("collection:download_argue_scores", args=["llm"]))
    assert download.status_code == 200
    table = read_scores_tsv(b"".join(download.streaming_content).decode())
    assert table["A", "all", "f1"] == pytest.approx(0.75) and table["B", "all", "f1"] == 0.0
    assert table["A", "t1", "weighted_coverage"] == pytest.approx(2 / 3)
    # The AutoJudge layouts: ir_measures' run, topic, measure, value.
    lines = b"".join(
        organizer.get(
            reverse("collection:download_argue_scores", args=["llm"]) + "?format=ir_measures"
        ).streaming_content
    ).decode()
    assert "A\tall\tf1\t0.75" in lines.splitlines()


def test_a_bank_without_questions_or_a_taken_name_is_refused(llm_server, argue_collection):
    with pytest.raises(JobRequestInvalid, match="no counted questions"):
        argue_job_create(name="x", bank="nope")
    job_run_sync(argue_job_create(name="llm", bank="gold", topics=["t2"]).pk)
    with pytest.raises(JobRequestInvalid):
        argue_job_create(name="llm", bank="gold")


def test_run_argue_runs_the_job_and_needs_a_bank(llm_server, argue_collection):
    out = StringIO()
    call_command(
        "run_argue", "--name", "cmd", "--bank", "gold", "--topics", "t2", "--sync", "--threads", "1", stdout=out
    )
    assert "1 items" in out.getvalue() and supports("cmd") == {("A", 0, "d4"): True}
    with pytest.raises(CommandError, match="--bank"):
        call_command("run_argue", "--name", "other", stdout=out)
    call_command("run_argue", "--bank", "gold", "--dry-run", stdout=out)
    assert out.getvalue().splitlines()[-1] == "3 reports"


def test_the_judgments_export_as_jsonl_in_the_layout_import_argue_reads(llm_server, argue_collection, organizer):
    job = argue_job_create(name="llm", bank="gold")
    job_run_sync(job.pk)
    out = StringIO()
    call_command("export_argue", "--name", "llm", stdout=out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["run_id"], r["topic_id"], len(r["sentences"])) for r in records] == [
        ("A", "t1", 2),
        ("A", "t2", 1),
        ("B", "t1", 0),
    ]
    assert all(set(r) == {"run_id", "topic_id", "sentences"} for r in records)
    first = records[0]["sentences"]
    assert [s["index"] for s in first] == [0, 1]  # the cut sentence is left out
    who = hashlib.md5(b"Who led the team?").hexdigest()
    when = hashlib.md5(b"When did it start?").hexdigest()
    assert first[0] == {
        "index": 0,
        "citations": [{"docid": "d1", "supports": "yes"}, {"docid": "d3", "supports": "no"}],
        "answers": [
            {"question_id": who, "answer_index": 0, "agrees": "yes"},
            {"question_id": when, "answer_index": 0, "agrees": "yes"},
            {"question_id": when, "answer_index": 1, "agrees": "no"},
        ],
        "needs_citation": "",
        "first_instance": "",
        "negative": "",
    }
    download = organizer.get(reverse("collection:download_argue_judgments", args=["llm"]))
    assert b"".join(download.streaming_content).decode() == out.getvalue()
    with pytest.raises(CommandError, match="no counted"):
        call_command("export_argue", "--name", "nobody", stdout=out)


def test_the_jobs_page_launches_it_with_a_bank_and_check_all(organizer, llm_server, argue_collection, worker_inline):
    launch = organizer.get(reverse("jobs:launch", args=["argue"])).content.decode()
    assert "manage.py run_argue --name NAME" in launch and 'value="gold"' in launch
    fields = {"name": "page", "bank": "gold", "check_all": "on", "runs": "A", "topics": "t1"}
    assert organizer.post(reverse("jobs:launch", args=["argue"]), fields).status_code == 302
    job = Job.objects.get(output_name="page")
    job.refresh_from_db()
    assert (job.status, job.done_items, job.params["check_all"], llm_server.count) == (Job.Status.DONE, 1, True, 11)
    source = LabelSource.objects.get(family="argue", name="page")
    assert set(source.prompt_versions) == {
        "argue-citation-support-v1",
        "argue-answer-agreement-v1",
        "argue-needs-citation-v1",
        "argue-first-instance-v1",
    }


def test_a_bank_edited_after_judging_is_told_in_the_sources_notes(llm_server, argue_collection):
    job_run_sync(argue_job_create(name="llm", bank="gold").pk)
    assert notes([("llm",)]) == {("llm",): []}
    Nugget.objects.get(text="When did it start?").delete()
    (sentence,) = notes([("llm",)])[("llm",)]
    assert "1 topic(s) (t1)" in sentence
    # t1 is scored on the bank as it is: Ann covers its one question.
    assert argue_scores_from_labels(name="llm").per_topic[("A", "t1")]["nugget_coverage"] == 1.0
