"""The lifecycle: scores count submitted human work, imported labels and finished LLM work, nothing open."""

import html
import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.jobs.engine import job_complete_if_finished, job_reopen, job_run_sync
from assessor.models import AssessorWork, Citation, Job, Qrel, QrelSource
from assessor.scoring.kept import scores_refresh
from assessor.scoring.lifecycle import open_work_included, open_work_notes
from assessor.work.judging import judge_work_reopen
from assessor.work.roles import Role
from assignment import kinds as assignment_kinds
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel
from assignment.selectors import conditions_list, conditions_notes, nugget_scores
from metaeval.qrels_agreement import qrels_grades
from nuggets import kinds as nugget_kinds
from relevance import kinds as relevance_kinds
from support import kinds as support_kinds
from support import services
from support.judging import SUPPORT_KINDS, topic_pairs
from support.models import SupportLabel
from support.selectors import methods_notes, support_methods_list, support_scores
from tests.builders import (
    make_answer,
    make_assignment_label,
    make_nugget_set,
    make_qrel,
    make_run,
    make_segment,
    make_topic,
    make_user,
    nuggets_of,
    source_of,
)
from tests.llm_server import Reply
from tests.scenarios import give_support, make_scenario

pytestmark = pytest.mark.django_db


def judge_all(work: AssessorWork, label: int) -> int:
    """Judge every pair of a support work with `label`; the number of pairs."""
    pairs = topic_pairs(work=work)
    for number, answer_id in enumerate(pairs.order, start=1):
        indexes = Citation.objects.filter(pk__in=pairs.pairs_of[answer_id]).values_list("sentence__index", flat=True)
        for index in indexes:
            work.refresh_from_db()
            services.support_label_save(
                work_id=work.pk, user=work.assessor, number=number, sentence_index=index, label=label,
                previous="", expected_version=work.version,
            )  # fmt: skip
    return pairs.total


def open_scratch_work_with_one_label() -> tuple:
    """Support judging from scratch given and one pair judged FS: work that is still open."""
    scenario = make_scenario(plant_llm=False)
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    services.support_label_save(
        work_id=work.pk, user=scenario.assessor, number=1, sentence_index=0, label=2, previous="",
        expected_version=work.version,
    )  # fmt: skip
    return scenario, work


def test_open_support_work_is_provisional_until_submitted_and_again_once_reopened():
    scenario, work = open_scratch_work_with_one_label()
    # One label of open work: no method, no scores, no topic evaluated.
    assert support_methods_list() == []
    with pytest.raises(LookupError):
        support_scores(method="scratch")
    with open_work_included():
        assert support_methods_list() == ["scratch"]
        assert support_scores(method="scratch").topics == [scenario.topic.pk]

    judge_all(work, 2)
    work.refresh_from_db()
    services.support_submit(work_id=work.pk, user=scenario.assessor, expected_version=work.version)
    assert support_methods_list() == ["scratch"]
    scores = support_scores(method="scratch")
    # Every pair judged FS: precision 1 for every answer; recall is over all sentences, one of three uncited.
    assert {run: means["weighted_precision"] for run, means in scores.run_means.items()} == dict.fromkeys(
        scores.runs, 1.0
    )

    judge_work_reopen(work_id=work.pk, by=scenario.organizer, kinds=SUPPORT_KINDS, reason="check")
    assert support_methods_list() == []


def test_a_running_job_s_labels_count_once_it_has_finished():
    topic = make_topic()
    segment = make_segment()
    answer = make_answer(make_run(), topic, [("One cites.", [segment])])
    job = Job.objects.create(kind=support_kinds.AUTO_SUPPORT, output_name="gpt", model="m", status=Job.Status.RUNNING)
    SupportLabel.objects.create(
        citation=answer.sentences.get().citations.get(), method="gpt", method_kind="auto", label=1,
        source=source_of("support", "gpt", kind="llm"), job=job,
    )  # fmt: skip
    assert support_methods_list() == []
    job_complete_if_finished(job.pk)  # it has no item left: done
    assert support_methods_list() == ["gpt"]
    assert support_scores(method="gpt").per_topic[(answer.run.run_id, topic.pk)]["weighted_precision"] == 0.5


def test_an_open_nugget_list_counts_for_nothing():
    topics = [make_topic(), make_topic()]
    run = make_run()
    for topic in topics:
        nugget_set = make_nugget_set(topic, texts=["one fact", "two facts"], name="auto_edit")
        answer = make_answer(run, topic)
        for nugget in nuggets_of(nugget_set):
            make_assignment_label(answer, nugget, "support", assigner="nist")
    assert nugget_scores(nuggets="auto_edit", assigner="nist").topics == sorted(t.pk for t in topics)
    topics[1].nugget_sets.update(status="open")
    scores_refresh(topics=[topics[1].pk])  # as reopening the list does
    scores = nugget_scores(nuggets="auto_edit", assigner="nist")
    # Only the submitted list's topic is evaluated: the run's mean is over it alone, all support: 1.0.
    assert scores.topics == [topics[0].pk] and scores.run_means[run.run_id]["A"] == 1.0
    topics[0].nugget_sets.update(status="open")
    scores_refresh(topics=[topics[0].pk])
    assert conditions_list() == []


def test_a_condition_whose_only_list_is_reopened_is_named_on_the_leaderboards_index(client):
    topic, run = make_topic("2024-7"), make_run()
    nugget_set = make_nugget_set(topic, texts=["one fact"], kind="manual", name="manual")
    make_assignment_label(make_answer(run, topic), nuggets_of(nugget_set)[0], "support", assigner="nist")
    client.force_login(make_user(Role.ORGANIZER))
    assert "Work still open" not in client.get(reverse("collection:leaderboards")).content.decode()
    # The list's assessor reopens it: its one condition has nothing final, and leaves every leaderboard.
    assessor = make_user(Role.ASSESSOR)
    AssessorWork.objects.create(
        topic=topic, assessor=assessor, kind=nugget_kinds.NUGGETS_MANUAL, nugget_set_name="manual",
        source=source_of("nuggets", "manual", kind="person"), status=AssessorWork.Status.IN_PROGRESS, reopened_count=1,
    )  # fmt: skip
    topic.nugget_sets.update(status="open")
    scores_refresh(topics=[topic.pk])
    assert conditions_list() == []
    index = client.get(reverse("collection:leaderboards")).content.decode()
    assert "Work still open" in index
    assert "ManualNuggets into &#x27;manual&#x27;: reopened on 1 topic(s) (2024-7)." in index


def test_the_leaderboard_switch_shows_open_work_as_provisional(client):
    scenario, work = open_scratch_work_with_one_label()
    client.force_login(make_user(Role.ORGANIZER))
    url = reverse("collection:support_leaderboard")
    page = client.get(url, {"method": "scratch"}).content.decode()
    assert "Counting submitted human work" in page and "SECRETRUN" not in page
    page = client.get(url, {"method": "scratch", "open": "1"}).content.decode()
    assert "Provisional:" in page and "SECRETRUN" in page
    assert f"still open on 1 topic(s) ({scenario.topic.pk})" in page
    index = client.get(reverse("collection:leaderboards"), {"open": "1"}).content.decode()
    assert "Support judging into &#x27;scratch&#x27; is still open" in index
    # Only organizers turn it on: an assessor's ?open=1 changes nothing (and leaderboards are not theirs).
    client.force_login(scenario.assessor)
    assert client.get(url, {"method": "scratch", "open": "1"}).status_code in (302, 403)


def test_exports_refuse_open_work_unless_included_and_warn(tmp_path):
    scenario, work = open_scratch_work_with_one_label()
    with pytest.raises(CommandError, match="no support labels for method 'scratch'"):
        call_command("export_support_scores", "--method", "scratch", stdout=io.StringIO(), stderr=io.StringIO())
    out, err = io.StringIO(), io.StringIO()
    call_command("export_support_scores", "--method", "scratch", "--include-open", stdout=out, stderr=err)
    assert "weighted_precision" in out.getvalue()
    assert (
        f"warning: Support judging into 'scratch' is still open on 1 topic(s) ({scenario.topic.pk})" in err.getvalue()
    )
    assert "counted as provisional" in err.getvalue()


def test_downloads_leave_open_work_out_unless_the_switch_is_on(client):
    scenario, work = open_scratch_work_with_one_label()
    client.force_login(scenario.organizer)
    scores = reverse("collection:download_support_scores", args=["scratch"])
    labels = reverse("collection:download_support", args=["scratch"])
    # Nothing of the method is counted yet: both downloads are 404s that say so.
    assert client.get(scores).status_code == client.get(labels).status_code == 404
    provisional = b"".join(client.get(scores, {"open": "1"}).streaming_content).decode()
    # By hand: sentence 0 judged fully supported (1), sentence 1 cites nothing (recall only), sentence 2 unjudged
    # (in neither): precision 1 / 1, recall 1 / 2; a run whose answer nobody judged is not in the table.
    assert "\tall\tweighted_precision\t1.0\n" in provisional and "\tall\tweighted_recall\t0.5\n" in provisional
    assert "SECRETRUN-" in b"".join(client.get(labels, {"open": "1"}).streaming_content).decode()


def test_progress_pages_mark_open_work_provisional(client):
    scenario = make_scenario(plant_llm=False)
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    client.force_login(scenario.organizer)
    row = client.get(reverse("support:organize")).content.decode().split(f'id="support-{work.pk}"')[1].split("</tr>")[0]
    assert "provisional" in row


def test_the_run_page_and_the_meta_evaluation_flag_open_work(client):
    scenario, work = open_scratch_work_with_one_label()
    client.force_login(scenario.organizer)
    run_id = scenario.answers[0].run.run_id
    page = client.get(reverse("collection:run", args=[run_id]), {"open": "1"}).content.decode()
    assert "Provisional:" in page and "is still open on 1 topic(s)" in page
    page = client.get(reverse("metaeval:index"), {"a": "support:scratch", "b": "support:scratch", "open": "1"})
    assert "is still open on 1 topic(s)" in page.content.decode()


def test_grades_of_a_running_relevance_job_are_provisional():
    topic = make_topic()
    segment = make_segment()
    job = Job.objects.create(kind=relevance_kinds.UMBRELA, output_name="umb", model="m", status=Job.Status.RUNNING)
    source = QrelSource.objects.create(name="umb", job=job, source=source_of("qrels", "umb", kind="llm"))
    Qrel.objects.create(source=source, topic=topic, segment=segment, grade=2, job=job)
    assert qrels_grades("umb") == {}
    with open_work_included():
        assert qrels_grades("umb") == {(topic.pk, segment.pk): 2}
    Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE)
    assert qrels_grades("umb") == {(topic.pk, segment.pk): 2}


def test_open_work_notes_name_open_and_reopened_topics_apart():
    """Open work, and among it the work reopened for changed nuggets, each named by topic; submitted work is not."""
    assessor = make_user()
    topics = [make_topic(f"2024-{n}") for n in (1, 2, 3)]
    statuses = [AssessorWork.Status.IN_PROGRESS, AssessorWork.Status.IN_PROGRESS, AssessorWork.Status.SUBMITTED]
    redos = [{}, {"nuggets": {"7": "reworded"}}, {}]
    for topic, status, redo in zip(topics, statuses, redos, strict=True):
        AssessorWork.objects.create(
            topic=topic, assessor=assessor, kind=assignment_kinds.ASSIGN_MANUAL, status=status, redo=redo
        )
    assert open_work_notes(AssessorWork.objects.all(), what="ManualAssign") == [
        "ManualAssign is still open on 2 topic(s) (2024-1, 2024-2): not counted.",
        "ManualAssign is reopened for changed nuggets on 1 topic(s) (2024-2).",
    ]


def test_the_notes_of_many_sources_are_read_together_and_each_source_gets_its_own(django_assert_num_queries):
    """Open nugget-list work, open ManualAssign work, a running job and stale labels, each on one source:
    every condition's and method's notes name only what concerns it, in a fixed number of queries."""
    assessor = make_user()
    t1, t2 = make_topic("2024-1"), make_topic("2024-2")
    alice = source_of("assignment", "alice", kind="people")
    source_of("assignment", "llm", kind="llm", stale={"set1": {"2024-2": ["7"]}})
    AssessorWork.objects.create(
        topic=t1, assessor=assessor, kind=assignment_kinds.ASSIGN_MANUAL, nugget_set_name="set1", source=alice
    )
    AssessorWork.objects.create(topic=t2, assessor=assessor, kind=nugget_kinds.NUGGETS_MANUAL, nugget_set_name="set2")
    job = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="llm", model="m", status=Job.Status.RUNNING)
    Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="alice", model="m", status=Job.Status.DONE)
    scratch = source_of("support", "scratch", kind="people")
    AssessorWork.objects.create(topic=t2, assessor=assessor, kind=SUPPORT_KINDS[0], source=scratch)
    conditions = [("set1", "alice"), ("set1", "llm"), ("set2", "alice")]
    with django_assert_num_queries(4):
        notes = conditions_notes(conditions)
    assert notes == {
        ("set1", "alice"): ["ManualAssign into 'alice' is still open on 1 topic(s) (2024-1): not counted."],
        ("set1", "llm"): [
            f"Job {job.pk} still writes into it: its labels are not counted until it finishes.",
            "Stale: the nugget lists of 1 topic(s) (2024-2) changed since 'llm' labelled them; "
            "re-run the affected items.",
        ],
        ("set2", "alice"): ["The nugget list 'set2' is still open on 1 topic(s) (2024-2): not counted."],
    }
    with django_assert_num_queries(4):
        assert conditions_notes([("set2", "llm")]) == {
            ("set2", "llm"): [
                "The nugget list 'set2' is still open on 1 topic(s) (2024-2): not counted.",
                f"Job {job.pk} still writes into it: its labels are not counted until it finishes.",
            ]
        }
    with django_assert_num_queries(2):
        methods = methods_notes([("scratch",), ("auto",)])
    assert methods == {
        ("scratch",): ["Support judging into 'scratch' is still open on 1 topic(s) (2024-2): not counted."],
        ("auto",): [],
    }


def test_a_job_with_failed_items_is_partial_wherever_its_scores_are_until_it_is_resumed(client, llm_server, settings):
    """Of three answers the LLM labels two and fails one: its labels count, and every page that shows them says
    they are partial, until the job is resumed and finishes."""
    settings.LLM_MAX_REASKS = 0
    topic = make_topic("2024-1", query="capital of France")
    nugget_set = make_nugget_set(topic, texts=["Paris is the capital", "It has a tower"], kind="manual", name="manual")
    for index in range(3):
        answer = make_answer(make_run(f"run{index}"), topic, [(f"Paris is the capital, answer {index}.", [])])
        for nugget in nuggets_of(nugget_set):
            make_assignment_label(answer, nugget, "support", assigner="nist")
    job = auto_assign_job_create(nuggets="manual", name="gpt")
    llm_server.script(Reply.unknown_label())
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, job.failed_items, job.total_items) == ("failed", 2, 1, 3)
    assert AssignmentLabel.objects.filter(assigner="gpt").count() == 4  # two answers of two nuggets count
    partial = (
        f"Partial: job {job.pk} failed on 1 of 3 items; its scores count only what it labelled until it is resumed."
    )
    client.force_login(make_user(Role.ORGANIZER))
    pages = {
        "leaderboards": reverse("collection:leaderboards"),
        "leaderboard": reverse("assignment:leaderboard") + "?nuggets=manual&assigner=gpt",
        "run": reverse("collection:run", args=["run0"]),
        "metaeval": reverse("metaeval:index") + "?a=manual/nist&b=manual/gpt&metric=Vstrict",
    }
    for page, url in pages.items():
        assert partial in html.unescape(client.get(url).content.decode()), page
    # The nist condition is not the job's: its own notes say nothing of it.
    assert conditions_notes([("manual", "nist")]) == {("manual", "nist"): []}

    assert job_reopen(job.pk) == 1
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.failed_items) == ("done", 0)
    for page, url in pages.items():
        assert "Partial: job" not in html.unescape(client.get(url).content.decode()), page


def test_the_topic_page_marks_a_support_label_of_open_work_and_grades_a_running_job_writes(client):
    scenario, work = open_scratch_work_with_one_label()
    client.force_login(make_user(Role.ORGANIZER))
    url = reverse("collection:topic", args=[scenario.topic.pk])
    page = html.unescape(client.get(url).content.decode())
    assert 'class="badge fs provisional" title="scratch (provisional: made in open work' in page
    assert "Not every label here counts:" in page
    # A relevance job still grading: its qrels source is marked in the segments' table.
    job = Job.objects.create(
        kind=relevance_kinds.UMBRELA, output_name="llm-grades", model="m", status=Job.Status.RUNNING
    )
    Qrel.objects.filter(
        pk=make_qrel(scenario.topic, make_segment(text="A graded passage."), source="llm-grades").pk
    ).update(job=job)
    running = client.get(url).content.decode()
    assert (
        '<th class="num">llm-grades <span class="badge provisional" title="a job still writes these grades' in running
    )

    # Submitted work and a finished job: nothing is marked.
    AssessorWork.objects.filter(pk=work.pk).update(status=AssessorWork.Status.SUBMITTED)
    Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE)
    page = html.unescape(client.get(url).content.decode())
    assert "provisional" not in page
