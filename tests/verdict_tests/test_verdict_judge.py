"""The example app's judge, through the registry alone: launched from the jobs page (and run in this process by
`run_judge`), scored on the leaderboards, exported, and compared in the meta-evaluation."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor.labelkit.files import AnswerLabelsImport
from assessor.models import Job, LabelSource
from tests.verdict_tests.collection import ANSWERS
from tests.verdicts.models import VERDICT_JOB, Verdict
from tests.verdicts.parts import VERDICTS

pytestmark = pytest.mark.django_db

EXPECTED = {(run, topic): verdict for run, topic, _, verdict in ANSWERS}


def stored(name: str) -> dict[tuple[str, str], str]:
    rows = Verdict.objects.filter(source__name=name).values_list("answer__run__run_id", "answer__topic_id", "label")
    return {(run, topic): label for run, topic, label in rows}


def test_the_jobs_page_lists_the_apps_judge_and_launches_it(organizer, llm_server, verdict_collection, worker_inline):
    listing = organizer.get(reverse("jobs:list")).content.decode()
    assert reverse("jobs:launch", args=[VERDICT_JOB]) in listing and "Answer verdicts" in listing
    launch = organizer.get(reverse("jobs:launch", args=[VERDICT_JOB])).content.decode()
    assert "answer by answer, whether the answer answers" in launch
    response = organizer.post(
        reverse("jobs:launch", args=[VERDICT_JOB]), {"name": "llm-page", "runs": "", "topics": ""}
    )
    job = Job.objects.get(output_name="llm-page")
    assert response.status_code == 302 and worker_inline == [job.pk]
    job.refresh_from_db()
    assert (job.kind, job.status, job.done_items) == (VERDICT_JOB, Job.Status.DONE, 6)
    assert stored("llm-page") == EXPECTED
    # Provenance: an LLM source with the job's endpoint, model and prompt version.
    source = LabelSource.objects.get(family="verdicts", name="llm-page")
    assert (source.kind, source.model, source.job_id) == (LabelSource.Kind.LLM, "fake-model", job.pk)
    assert source.prompt_versions == {"answer_verdict": 1}
    detail = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    assert "Answer verdicts" in detail


def test_the_job_judges_the_chosen_runs_only(run_judge, verdict_collection):
    job = run_judge("llm-cli", runs=["r1", "r2"])
    assert (job.status, job.total_items, job.done_items) == (Job.Status.DONE, 4, 4)
    assert stored("llm-cli") == {key: value for key, value in EXPECTED.items() if key[0] in ("r1", "r2")}
    assert set(Verdict.objects.filter(source__name="llm-cli").values_list("job__kind", flat=True)) == {VERDICT_JOB}


def test_a_malformed_answer_is_asked_again_and_stored_once_right(llm_server, run_judge, verdict_collection):
    from tests.llm_server import Reply

    llm_server.script(Reply.literal("Well, I think yes."))
    run_judge("llm-reask", runs=["r1"], topics=["t1"])
    assert stored("llm-reask") == {("r1", "t1"): "yes"}
    assert llm_server.count == 2  # the prose answer, then the re-ask


def test_the_scores_are_on_the_leaderboards_and_in_the_exports(organizer, run_judge, verdict_collection):
    job = run_judge("llm-a")
    index = organizer.get(reverse("collection:leaderboards")).content.decode()
    assert "<h2>Answer verdicts</h2>" in index
    assert reverse("labels:leaderboard", args=["verdicts"]) + "?source=llm-a" in index
    board = organizer.get(reverse("labels:leaderboard", args=["verdicts"]), {"source": "llm-a"}).content.decode()
    # By hand: r1 yes, yes -> 1.0; r2 no, yes -> 0.5; r3 no, no -> 0.0, in that order.
    assert board.index(">r1<") < board.index(">r2<") < board.index(">r3<")
    tsv = b"".join(organizer.get(reverse("labels:score_file", args=["verdicts", "llm-a"])).streaming_content)
    rows = {tuple(line.split("\t")[:3]): line.split("\t")[3] for line in tsv.decode().splitlines()[1:]}
    assert float(rows[("r1", "all", "yes")]) == 1.0
    assert float(rows[("r2", "all", "yes")]) == 0.5
    assert float(rows[("r3", "all", "yes")]) == 0.0
    assert float(rows[("r2", "t1", "yes")]) == 0.0
    labels = b"".join(organizer.get(reverse("labels:download", args=["verdicts", "llm-a"])).streaming_content)
    lines = [json.loads(line) for line in labels.decode().splitlines()]
    assert {(row["run_id"], row["topic_id"]): row["verdict"] for row in lines} == EXPECTED
    assert {row["made_by"] for row in lines} == {f"job:{job.pk}"}
    assert len(lines) == 6


def test_the_meta_evaluation_compares_the_apps_sources(run_judge, verdict_collection, write_file):
    run_judge("llm-a")
    # A second judge from a file: r1 yes, no -> 0.5; r2 yes, yes -> 1.0; r3 no, no -> 0.0.
    verdicts = {
        ("r1", "t1"): "yes",
        ("r1", "t2"): "no",
        ("r2", "t1"): "yes",
        ("r2", "t2"): "yes",
        ("r3", "t1"): "no",
        ("r3", "t2"): "no",
    }
    lines = [json.dumps({"run_id": run, "topic_id": topic, "verdict": v}) for (run, topic), v in verdicts.items()]
    AnswerLabelsImport(spec=VERDICTS, path=write_file("v.jsonl", "\n".join(lines) + "\n"), name="file-a").run()
    from metaeval.sources import sources_list

    assert {"verdicts:llm-a", "verdicts:file-a"} <= set(sources_list())
    out = io.StringIO()
    call_command("metaeval", "--a", "verdicts:llm-a", "--b", "verdicts:file-a", "--json", stdout=out)
    figures = json.loads(out.getvalue())["metrics"]["yes"]
    # Rankings r1 > r2 > r3 and r2 > r1 > r3: one discordant pair of three, tau = (2 - 1) / 3.
    assert figures["tau_run"] == pytest.approx(1 / 3)
    assert figures["runs"] == 3
