"""Kept scores equal a rebuild from the labels after any sequence of the services' writes.

The writes are the real services (label saves, submits, reopenings, nugget list
changes and resubmits, imports with replace, an LLM job against the fake
server, item by item); after each one, every condition's and method's kept
scores must equal what the from-labels code computes (assignment.selectors,
support.selectors: they read the labels, not the kept rows).
"""

import dataclasses
import io
import json
import random
from fractions import Fraction

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assessor.collection.importing.runs import run_import
from assessor.collection.run_join import runs_join
from assessor.jobs import engine
from assessor.jobs.engine import JobRequestInvalid, item_process, job_complete_if_finished, pending_item_ids
from assessor.models import (
    Answer,
    AssessorWork,
    Citation,
    Job,
    JobItem,
    KeptAnswerScore,
    KeptRunScore,
    KeptSource,
    Topic,
)
from assessor.models.scores import WRITTEN_AHEAD
from assessor.registry import registry
from assessor.scoring.kept import job_ending, kept_scores, kept_scores_of_run, scores_rebuild, scores_refresh
from assessor.scoring.lifecycle import open_work_included
from assessor.work.judging import JudgeError, judge_work_reopen
from assessor.work.roles import Role
from assessor.work.services import WorkError
from assignment import judging
from assignment import kinds as assignment_kinds
from assignment.auto import auto_assign_job_create, auto_assign_rerun_create
from assignment.importing import assignments_import
from assignment.models import AssignmentLabel
from assignment.selectors import conditions_from_labels, conditions_list, nugget_scores, nugget_scores_from_labels
from nuggets.importing import nuggets_import
from nuggets.services import nugget_operation_apply, nugget_set_reopen, nugget_set_submit
from support import kinds as support_kinds
from support import services as support_services
from support.importing import support_import
from support.judging import SUPPORT_KINDS, topic_pairs
from support.models import SupportLabel
from support.selectors import (
    support_methods_from_labels,
    support_methods_list,
    support_scores,
    support_scores_from_labels,
)
from tests.builders import make_answer, make_run, make_segment, make_user
from tests.scenarios import label_everything, make_given_topic, nugget_set_of

pytestmark = pytest.mark.django_db(transaction=False)

RUNS = ["runA", "runB", "runC"]
ASSIGN_LABELS = ["support", "partial_support", "not_support"]


def assert_kept_equal_rebuild() -> None:
    """Every kept source equals its scores computed from the labels, whole and one run at a time."""
    assert conditions_list() == conditions_from_labels()
    for nuggets, assigner in conditions_from_labels():
        expected = nugget_scores_from_labels(nuggets=nuggets, assigner=assigner)
        assert nugget_scores(nuggets=nuggets, assigner=assigner) == expected, (nuggets, assigner)
        for run in expected.runs[:1]:
            assert nugget_scores(nuggets=nuggets, assigner=assigner, runs=[run]) == nugget_scores_from_labels(
                nuggets=nuggets, assigner=assigner, runs=[run]
            )
    assert support_methods_list() == support_methods_from_labels()
    for method in support_methods_from_labels():
        assert support_scores(method=method) == support_scores_from_labels(method=method), method


class World:
    """Two topics, each with its assessor's nugget list, ManualAssign and support judging, three runs' answers."""

    def __init__(self, rng: random.Random, write_file) -> None:
        self.rng = rng
        self.write_file = write_file
        self.organizer = make_user(Role.ORGANIZER)
        self.nugget_works: list[AssessorWork] = []
        for index in range(2):
            work = make_given_topic(condition="manual", organizer=self.organizer, query=f"question {index}")
            for fact in range(3):
                self._apply(work, "add", text=f"fact {fact} of topic {index}", importance=rng.choice(["vital", "okay"]))
            nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
            self.nugget_works.append(work)
        self.topics: list[Topic] = [work.topic for work in self.nugget_works]
        runs = [make_run(run_id) for run_id in RUNS]
        for topic in self.topics:
            cited, other = make_segment(), make_segment()
            for index, run in enumerate(runs):
                make_answer(
                    run,
                    topic,
                    [
                        (f"Run {index} says fact 0 of {topic.pk}.", [cited]),
                        (f"Run {index} adds {'a short' if index else 'an uncited and much longer'} remark.", []),
                        (f"Run {index} cites another passage.", [other, cited]),
                    ],
                )
        self.assign = [
            judging.assign_work_give(topic=w.topic, assessor=w.assessor, by=self.organizer) for w in self.nugget_works
        ]
        self.support = [
            support_services.support_work_give(
                topic=w.topic, assessor=w.assessor, kind=support_kinds.SUPPORT_SCRATCH, by=self.organizer
            )
            for w in self.nugget_works
        ]
        self.job: Job | None = None

    # --- the steps ---------------------------------------------------------------------

    def _apply(self, work: AssessorWork, operation: str, **params) -> None:
        nugget_operation_apply(
            work_id=work.pk,
            user=work.assessor,
            operation=operation,
            params=params,
            expected_version=nugget_set_of(work).version,
        )

    def assign_label(self) -> None:
        work = self._fresh(self.rng.choice(self.assign))
        if work.status == AssessorWork.Status.SUBMITTED:
            return
        order = judging.answer_order(work=work)
        number = self.rng.randrange(1, len(order) + 1)
        nugget = self.rng.choice(list(nugget_set_of(work).nuggets.all()))
        current = AssignmentLabel.objects.filter(work=work, answer_id=order[number - 1], nugget=nugget).first()
        try:
            judging.assignment_label_save(
                work_id=work.pk, user=work.assessor, number=number, nugget_id=nugget.pk,
                label=self.rng.choice(ASSIGN_LABELS), previous=current.label if current else "",
                expected_version=work.version,
            )  # fmt: skip
        except JudgeError:
            pass  # a nugget that is not reopened for redo, or a list still open: refused, nothing written

    def assign_finish(self, work: AssessorWork | None = None) -> None:
        """Label what is missing and submit."""
        work = self._fresh(work or self.rng.choice(self.assign))
        if work.status == AssessorWork.Status.SUBMITTED:
            return
        try:
            label_everything(work, choose=lambda: self.rng.choice(ASSIGN_LABELS))
            judging.assign_submit(work_id=work.pk, user=work.assessor, expected_version=work.version)
        except (JudgeError, WorkError):
            pass

    def assign_reopen(self) -> None:
        work = self._fresh(self.rng.choice(self.assign))
        if work.status == AssessorWork.Status.SUBMITTED:
            judge_work_reopen(work_id=work.pk, by=self.organizer, kinds=[assignment_kinds.ASSIGN_MANUAL])

    def support_label(self) -> None:
        work = self._fresh(self.rng.choice(self.support))
        if work.status == AssessorWork.Status.SUBMITTED:
            return
        pairs = topic_pairs(work=work)
        number = self.rng.randrange(1, len(pairs.order) + 1)
        citations = Citation.objects.filter(pk__in=pairs.pairs_of[pairs.order[number - 1]])
        citation = self.rng.choice(list(citations))
        current = SupportLabel.objects.filter(work=work, citation=citation).first()
        support_services.support_label_save(
            work_id=work.pk, user=work.assessor, number=number, sentence_index=citation.sentence.index,
            label=self.rng.choice([0, 1, 2]), previous=current.label if current else "",
            expected_version=work.version,
        )  # fmt: skip

    def support_finish(self) -> None:
        work = self._fresh(self.rng.choice(self.support))
        if work.status == AssessorWork.Status.SUBMITTED:
            return
        pairs = topic_pairs(work=work)
        for number, answer_id in enumerate(pairs.order, start=1):
            for citation in Citation.objects.filter(pk__in=pairs.pairs_of[answer_id]).select_related("sentence"):
                if not SupportLabel.objects.filter(work=work, citation=citation).exists():
                    work.refresh_from_db()
                    support_services.support_label_save(
                        work_id=work.pk, user=work.assessor, number=number, sentence_index=citation.sentence.index,
                        label=self.rng.choice([0, 1, 2]), previous="", expected_version=work.version,
                    )  # fmt: skip
        work.refresh_from_db()
        support_services.support_submit(work_id=work.pk, user=work.assessor, expected_version=work.version)

    def support_reopen(self) -> None:
        work = self._fresh(self.rng.choice(self.support))
        if work.status == AssessorWork.Status.SUBMITTED:
            judge_work_reopen(work_id=work.pk, by=self.organizer, kinds=list(SUPPORT_KINDS))

    def nugget_change(self) -> None:
        """Reopen a list, reword, reweigh, add or delete a nugget, and submit it again."""
        work = self._fresh(self.rng.choice(self.nugget_works))
        nugget_set_reopen(work_id=work.pk, by=self.organizer, reason="a change", confirmed=True)
        nuggets = list(nugget_set_of(work).nuggets.order_by("position"))
        nugget = self.rng.choice(nuggets)
        change = self.rng.choice(["edit", "importance", "add", "delete"] if len(nuggets) > 2 else ["add"])
        if change == "edit":
            self._apply(work, "edit", nugget=nugget.pk, text=f"{nugget.text}, reworded {self.rng.random():.3f}")
        elif change == "importance":
            self._apply(
                work, "importance", nugget=nugget.pk, importance="okay" if nugget.importance == "vital" else "vital"
            )
        elif change == "add":
            self._apply(work, "add", text=f"a new fact {self.rng.random():.3f}", importance="vital")
        else:
            self._apply(work, "delete", nugget=nugget.pk)
        nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)

    def labels_import(self) -> None:
        """An assignments file of its own nugget lists, imported again with replace: its labels change.

        Now and then its nugget list of a topic changes (the labels on the old nuggets retired),
        and a line of a run with no answer in the topic makes the answer (every source's scores there change).
        """
        lines = []
        for topic in self.topics:
            runs = self.rng.sample(RUNS, self.rng.randrange(1, len(RUNS) + 1))
            if self.rng.random() < 0.3:
                runs.append("runD")
            nuggets = [("imported fact one", "vital"), ("imported fact two", "okay")]
            if self.rng.random() < 0.3:
                nuggets = nuggets[:1] if self.rng.random() < 0.5 else [*nuggets, ("imported fact three", "vital")]
            for run in runs:
                stored = Answer.objects.filter(topic=topic, run__run_id=run).first()
                lines.append(
                    json.dumps(
                        {
                            "qid": topic.pk,
                            "run_id": run,
                            "answer_text": stored.text if stored else f"Run {run} answers {topic.pk} at last.",
                            "nuggets": [
                                {"text": text, "importance": importance, "assignment": self.rng.choice(ASSIGN_LABELS)}
                                for text, importance in nuggets
                            ],
                        }
                    )
                )
        path = self.write_file(f"assigned-{self.rng.random():.6f}.jsonl", "\n".join(lines) + "\n")
        assignments_import(
            path=path, nuggets="auto_edit", assigner="manual", assigner_name="nist", replace=True, retire_labels=True
        )

    def support_import(self) -> None:
        """A support file judging the stored answers' citations again with replace; now and then a new run's answer."""
        lines = []
        for topic in self.topics:
            for answer in Answer.objects.filter(topic=topic, run__run_id__in=RUNS).select_related("run"):
                if self.rng.random() < 0.5:
                    continue
                sentences = [
                    {
                        "sentenceID": sentence.index,
                        "text": sentence.text,
                        "citations": [
                            {"citationID": c.position, "reference": c.segment_id, "support": self.rng.choice([0, 1, 2])}
                            for c in sentence.citations.order_by("position")
                        ],
                    }
                    for sentence in answer.sentences.order_by("index")
                ]
                lines.append(json.dumps({"topic_id": topic.pk, "run_id": answer.run.run_id, "sentences": sentences}))
            if self.rng.random() < 0.3 and not Answer.objects.filter(topic=topic, run__run_id="runE").exists():
                cited = Citation.objects.filter(sentence__answer__topic=topic).values_list("segment_id", flat=True)[0]
                sentences = [
                    {
                        "sentenceID": 0,
                        "text": f"Run E on {topic.pk}.",
                        "citations": [{"citationID": 0, "reference": cited, "support": 2}],
                    }
                ]
                lines.append(json.dumps({"topic_id": topic.pk, "run_id": "runE", "sentences": sentences}))
        if lines:
            path = self.write_file(f"support-{self.rng.random():.6f}.jsonl", "\n".join(lines) + "\n")
            support_import(path=path, method="scratch", method_name="nist-support", replace=True)

    def nuggets_import(self) -> None:
        """A nugget list file with replace over the imported lists: a topic's list reworded, shortened or its
        importance changed (the labels on old nuggets retired), or a new list name (no labels: nothing changes)."""
        name = "auto_edit" if self.rng.random() < 0.7 else f"other{self.rng.randrange(2)}"
        lines = []
        for topic in self.rng.sample(self.topics, self.rng.randrange(1, len(self.topics) + 1)):
            nuggets = [("imported fact one", "vital"), ("imported fact two", "okay")]
            change = self.rng.choice(["importance", "reword", "shorter", "same"])
            if change == "importance":
                nuggets = [(text, "okay" if importance == "vital" else "vital") for text, importance in nuggets]
            elif change == "reword":
                nuggets[1] = (f"imported fact two, said again {self.rng.randrange(3)}", "okay")
            elif change == "shorter":
                nuggets = nuggets[:1]
            lines.append({"qid": topic.pk, "nuggets": [{"text": t, "importance": i} for t, i in nuggets]})
        path = self.write_file(
            f"nuggets-{self.rng.random():.6f}.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n"
        )
        nuggets_import(path=path, kind="auto_edit", name=name, replace=True, retire_labels=True)

    def run_import(self, new: bool | None = None) -> None:
        """A run file: a new run's answers (no labels: nothing kept changes), or a stored run's answers again with
        replace, a sentence's citations cut or its text changed (the labels of its citations go)."""
        lines = []
        if new if new is not None else self.rng.random() < 0.4:
            run_id = f"runF{self.rng.randrange(3)}"
            for topic in self.rng.sample(self.topics, self.rng.randrange(1, len(self.topics) + 1)):
                cited = Citation.objects.filter(sentence__answer__topic=topic).values_list("segment_id", flat=True)[0]
                answer = [{"text": f"Run {run_id} on {topic.pk}.", "citations": [0]}]
                lines.append(
                    {
                        "run_id": run_id,
                        "topic_id": topic.pk,
                        "topic": topic.query,
                        "references": [cited],
                        "answer": answer,
                    }
                )
        else:
            run_id = self.rng.choice(RUNS)
            for answer in Answer.objects.filter(run__run_id=run_id).select_related("topic"):
                references = list(answer.references.order_by("rank").values_list("segment_id", flat=True))
                sentences = [
                    {
                        "text": sentence.text,
                        "citations": [c.reference_rank for c in sentence.citations.order_by("position")],
                    }
                    for sentence in answer.sentences.order_by("index")
                ]
                changed = self.rng.choice(sentences)
                if changed["citations"] and self.rng.random() < 0.5:
                    changed["citations"] = changed["citations"][:-1]
                else:
                    changed["text"] += f" Said again {self.rng.random():.3f}."
                lines.append(
                    {
                        "run_id": run_id,
                        "topic_id": answer.topic_id,
                        "topic": answer.topic.query,
                        "references": references,
                        "answer": sentences,
                    }
                )
        path = self.write_file(
            f"run-{self.rng.random():.6f}.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n"
        )
        run_import(path=path, replace=True)

    def job_step(self) -> None:
        """An AutoAssign job worked one item at a time: its labels count once it has finished."""
        if self.job is None or self.job.status in (Job.Status.DONE, Job.Status.FAILED):
            try:
                if self.job is None:
                    self.job = auto_assign_job_create(nuggets="manual", name="gpt")
                else:
                    self.job = auto_assign_rerun_create(name="gpt")
            except JobRequestInvalid:
                return  # nothing stale to label again
        pending = pending_item_ids(self.job.pk)
        if pending:
            item_process(pending[0])
        job_complete_if_finished(self.job.pk)
        self.job.refresh_from_db()

    STEPS = (
        "assign_label",
        "assign_label",
        "assign_finish",
        "assign_reopen",
        "support_label",
        "support_finish",
        "support_reopen",
        "nugget_change",
        "labels_import",
        "support_import",
        "run_import",
        "nuggets_import",
        "job_step",
        "job_step",
    )

    def step(self) -> str:
        name = self.rng.choice(self.STEPS)
        getattr(self, name)()
        return name

    @staticmethod
    def _fresh(work: AssessorWork) -> AssessorWork:
        work.refresh_from_db()
        return work


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_scores_equal_a_rebuild_after_every_step(seed, llm_server, write_file):
    world = World(random.Random(seed), write_file)
    assert_kept_equal_rebuild()
    done = []  # shown by pytest when an assertion fails
    for _ in range(30):
        done.append(world.step())
        assert_kept_equal_rebuild()
    # Then every kind of work finished, so that people's, a file's and an LLM's scores are all kept.
    world.labels_import()
    assert_kept_equal_rebuild()
    for _ in range(20):
        if world.job is not None and world.job.status in (Job.Status.DONE, Job.Status.FAILED):
            break
        world.job_step()
        assert_kept_equal_rebuild()
    for work in world.assign:
        world.assign_finish(work)
        assert_kept_equal_rebuild()
    assert {assigner for _, assigner in conditions_list()} >= {"nist", "gpt", "manual"}


def test_a_runs_import_refreshes_the_answers_it_rewrote_and_nothing_else(llm_server, write_file):
    world = World(random.Random(3), write_file)
    world.labels_import()
    world.support_import()
    assert_kept_equal_rebuild()

    def kept_rows() -> dict[str, dict[int, tuple]]:
        rows: dict[str, dict[int, tuple]] = {}
        for pk, run_id, source, values in KeptAnswerScore.objects.values_list(
            "pk", "run__run_id", "source__name", "values"
        ):
            rows.setdefault(run_id, {})[pk] = (source, json.dumps(values, sort_keys=True))
        return rows

    stamps = dict(KeptSource.objects.values_list("name", "stamp"))
    before = kept_rows()
    # A new run: no labels on its answers, so no kept figure changes and no source is stamped anew.
    world.run_import(new=True)
    assert Answer.objects.filter(run__run_id__startswith="runF").exists()
    assert dict(KeptSource.objects.values_list("name", "stamp")) == stamps and kept_rows() == before
    # A stored run again with replace: its answers' rows are written anew, the other runs' rows are untouched.
    world.run_import(new=False)
    after = kept_rows()
    replaced = {run for run in RUNS if after.get(run, {}).keys() != before.get(run, {}).keys()}
    assert len(replaced) == 1
    assert all(after[run] == before[run] for run in RUNS if run not in replaced)
    assert_kept_equal_rebuild()


def test_a_run_join_moves_the_kept_scores(llm_server, write_file):
    world = World(random.Random(7), write_file)
    world.labels_import()
    before = nugget_scores(nuggets="auto_edit", assigner="nist")
    assert before.runs
    # runA joins a fourth run that answers nothing: nothing conflicts, runA's scores become runD's.
    make_run("runD")
    runs_join(keep="runD", merge="runA", by=None)
    after = nugget_scores(nuggets="auto_edit", assigner="nist")
    assert after == nugget_scores_from_labels(nuggets="auto_edit", assigner="nist")
    renamed = {("runD" if run == "runA" else run, topic): values for (run, topic), values in before.per_topic.items()}
    assert after.per_topic == renamed
    assert "runA" not in after.runs


def test_open_work_is_computed_on_request_and_never_kept(llm_server, write_file):
    world = World(random.Random(11), write_file)
    world.assign_label()
    while not AssignmentLabel.objects.filter(work__in=world.assign).exists():
        world.assign_label()
    assert ("manual", "manual") not in conditions_list()
    with open_work_included():
        assert ("manual", "manual") in conditions_list()
        assert nugget_scores(nuggets="manual", assigner="manual").per_topic
        # A write made while an organizer looks at open work still keeps the finished work's scores only.
        scores_refresh(discover=True)
    assert not KeptSource.objects.filter(name="manual/manual").exists()


def test_the_rebuild_command_recomputes_what_was_lost(llm_server, write_file):
    world = World(random.Random(5), write_file)
    world.labels_import()
    kept = nugget_scores(nuggets="auto_edit", assigner="nist")
    KeptAnswerScore.objects.all().delete()
    out = io.StringIO()
    call_command("rebuild_scores", stdout=out)
    assert "conditions: 1 source(s) kept" in out.getvalue()
    assert nugget_scores(nuggets="auto_edit", assigner="nist") == kept
    rebuilt = scores_rebuild()
    # Every registered family is rebuilt (the test settings' example app's too, with nothing to keep).
    assert rebuilt == {"conditions": 1, "methods": 0, "preferences": 0, "grades": 0, "argue": 0, "verdicts": 0}


def test_one_label_save_refreshes_its_answer_only(llm_server, write_file):
    """Incremental: a label's refresh reads and writes one answer's rows, whatever the number of answers."""
    world = World(random.Random(3), write_file)
    world.labels_import()
    label = AssignmentLabel.objects.filter(assigner="nist").select_related("answer").first()
    source = KeptSource.objects.get(name="auto_edit/nist")
    before = dict(KeptAnswerScore.objects.filter(source=source).values_list("answer_id", "values"))
    AssignmentLabel.objects.filter(pk=label.pk).update(label="support" if label.label != "support" else "not_support")
    with CaptureQueriesContext(connection) as queries:
        scores_refresh(
            family="conditions",
            columns=("auto_edit", "nist"),
            topics=[label.answer.topic_id],
            answers=[label.answer_id],
        )
    after = dict(KeptAnswerScore.objects.filter(source=source).values_list("answer_id", "values"))
    assert {answer for answer in after if after[answer] != before.get(answer)} == {label.answer_id}
    assert kept_scores(family="conditions", columns=("auto_edit", "nist")) == nugget_scores_from_labels(
        nuggets="auto_edit", assigner="nist"
    )
    # A fixed handful of queries, none of them a read of the whole condition.
    assert len(queries.captured_queries) < 20


def test_a_label_save_in_open_work_touches_no_kept_score(llm_server, write_file):
    """Open work's labels count neither before nor after a save: the save reads and writes no kept row."""
    world = World(random.Random(7), write_file)
    world.labels_import()
    kept_tables = {KeptAnswerScore._meta.db_table, KeptSource._meta.db_table}
    for save, label_table in (
        (world.assign_label, AssignmentLabel._meta.db_table),
        (world.support_label, SupportLabel._meta.db_table),
    ):
        with CaptureQueriesContext(connection) as queries:
            save()
        # The save itself wrote its label (the work is fresh: its first label is an insert).
        assert any(q["sql"].startswith("INSERT") and label_table in q["sql"] for q in queries.captured_queries), save
        touched = [q["sql"] for q in queries.captured_queries if any(table in q["sql"] for table in kept_tables)]
        assert touched == [], save
    assert_kept_equal_rebuild()


def test_a_topic_refresh_reads_the_kept_answers_of_its_topic_only(llm_server, write_file):
    """A run's sums take the topic's rows away and add them again: no other topic's kept row is read."""
    world = World(random.Random(9), write_file)
    world.labels_import()
    topic = world.topics[0].pk
    table = KeptAnswerScore._meta.db_table
    with CaptureQueriesContext(connection) as queries:
        scores_refresh(family="conditions", columns=("auto_edit", "nist"), topics=[topic])
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT") and '"values"' in q["sql"]]
    assert reads, "the refresh read the rows it replaces"
    assert all(table in sql and "topic_id" in sql for sql in reads), reads
    assert_kept_equal_rebuild()


def test_a_run_whose_kept_rows_went_behind_the_refresh_is_summed_again():
    """Rows gone without a refresh (a cascade) make the expected count wrong: that run is summed from its rows."""
    world = World(random.Random(2), write_file=None)
    for work in world.assign:
        world.assign_finish(work)
    source = KeptSource.objects.get(name="manual/manual")
    gone = KeptAnswerScore.objects.filter(source=source, topic=world.topics[1]).order_by("pk").first()
    run_pk = gone.run_id
    gone.delete()
    scores_refresh(family="conditions", columns=("manual", "manual"), topics=[world.topics[0].pk])
    kept = KeptRunScore.objects.get(source=source, run_id=run_pk)
    rows = list(KeptAnswerScore.objects.filter(source=source, run_id=run_pk).values_list("values", flat=True))
    assert kept.answered == len(rows)
    # The exact sum of the rows' fractions (worked here with Fraction, not with the code's exact_sum).
    fractions = {m: sum((Fraction(r[m]).limit_denominator(10**6) for r in rows), Fraction(0)) for m in source.metrics}
    assert {metric: Fraction(text) for metric, text in kept.exact_sums.items()} == fractions
    assert kept.sums == {metric: float(total) for metric, total in fractions.items()}


def test_a_runs_kept_scores_of_every_source_read_at_once_equal_each_sources_own(llm_server, write_file):
    world = World(random.Random(6), write_file)
    world.labels_import()
    for work in world.assign:
        world.assign_finish(work)
    world.support_finish()
    for run in RUNS:
        every = kept_scores_of_run(run)
        assert {key for key in every} == {(s.family, tuple(s.name.split("/"))) for s in KeptSource.objects.all()}
        assert len(every) >= 3  # two conditions and a method at least
        for (family, columns), scores in every.items():
            assert scores == kept_scores(family=family, columns=columns, runs=[run]), (run, family, columns)


def test_a_refresh_of_some_answers_reads_their_kept_rows_only(llm_server, write_file):
    """Some answers' refresh (a run's import, a label save) reads and writes their kept rows only: a topic whose
    answers it refreshed is known evaluated from the rows it wrote, or by whether another answer's row is left."""
    world = World(random.Random(5), write_file)
    world.labels_import()
    source = KeptSource.objects.get(name="auto_edit/nist")
    kept = KeptAnswerScore.objects.filter(source=source).order_by("answer_id")
    by_topic: dict[str, list[int]] = {}
    for topic_id, answer_id in kept.values_list("topic_id", "answer_id"):
        by_topic.setdefault(topic_id, []).append(answer_id)
    # A topic with two kept answers or more (one's labels taken away, then the others'), and another topic.
    topic_id = next(pk for pk, ids in sorted(by_topic.items()) if len(ids) >= 2)
    topic, other = Topic.objects.get(pk=topic_id), Topic.objects.get(pk=min(set(by_topic) - {topic_id}))
    answers = by_topic[topic_id]
    labels = AssignmentLabel.objects.filter(assigner="nist", nugget__nugget_set__name="auto_edit")
    table = KeptAnswerScore._meta.db_table

    def refreshed(ids: list[int]) -> list[str]:
        with CaptureQueriesContext(connection) as queries:
            scores_refresh(family="conditions", columns=("auto_edit", "nist"), answers=ids)
        return [q["sql"] for q in queries.captured_queries if table in q["sql"]]

    # One answer's labels gone: the topic is still evaluated (its other answers' rows are left).
    labels.filter(answer_id=answers[0]).delete()
    touched = refreshed(answers[:1])
    source.refresh_from_db()
    assert topic.pk in source.topics and other.pk in source.topics
    assert not KeptAnswerScore.objects.filter(source=source, answer_id=answers[0]).exists()
    # Every read of the kept rows names the answers, or their runs (a count), or the topic (one EXISTS).
    reads = [sql for sql in touched if sql.startswith("SELECT")]
    assert reads and all(
        "answer_id" in sql or ("COUNT" in sql and "run_id" in sql) or "EXISTS" in sql for sql in reads
    ), reads
    assert not any("DISTINCT" in sql for sql in reads), reads
    assert_kept_equal_rebuild()
    # Every answer's labels gone: the topic is no longer evaluated, and the run means are over one topic less.
    labels.filter(answer__topic=topic).delete()
    refreshed(answers)
    source.refresh_from_db()
    assert topic.pk not in source.topics and other.pk in source.topics
    assert_kept_equal_rebuild()


def _read_ahead_used(monkeypatch) -> list[bool]:
    """Whether each job's end found the condition's tallies read ahead still standing (assignment.ahead)."""
    from assignment import selectors

    used: list[bool] = []
    read = selectors._tallies_read_ahead

    def recorded(**kwargs):
        tallies = read(**kwargs)
        if job_ending() is not None:
            used.append(tallies is not None)
        return tallies

    monkeypatch.setattr(selectors, "_tallies_read_ahead", recorded)
    return used


def _job_worked_but_its_last_item(monkeypatch, on_commit, *, name: str = "gpt") -> tuple[Job, int]:
    """An AutoAssign job of six answers worked but for its last item; its end read ahead when two were left (after
    that item's commit: `on_commit` is pytest-django's `django_capture_on_commit_callbacks`)."""
    monkeypatch.setattr(engine, "PREPARE_WHEN_OPEN", 2)
    job = auto_assign_job_create(nuggets="manual", name=name)
    *first, last = pending_item_ids(job.pk)
    assert len(first) == 5
    for item_id in first:
        with on_commit(execute=True):
            item_process(item_id)
    return job, last


def test_a_jobs_end_uses_the_tallies_read_ahead_while_its_last_items_were_out(
    llm_server, write_file, monkeypatch, django_capture_on_commit_callbacks
):
    World(random.Random(4), write_file)
    used = _read_ahead_used(monkeypatch)
    job, last = _job_worked_but_its_last_item(monkeypatch, django_capture_on_commit_callbacks)
    assert ("manual", "gpt") not in conditions_list()  # the job's labels count for nothing yet
    item_process(last)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and used == [True]
    assert ("manual", "gpt") in conditions_list()
    assert_kept_equal_rebuild()


@pytest.mark.parametrize(
    "change, stands",
    [("people", True), ("edit", False), ("importance", False), ("add", False), ("delete", False)],
)
def test_what_was_read_ahead_of_a_jobs_end_is_read_again_once_what_it_stood_on_changed(
    change, stands, llm_server, write_file, monkeypatch, django_capture_on_commit_callbacks
):
    """Between the read and the end, people submit their labels of the answers (another condition), or a nugget list
    is reopened, changed and submitted again: the tallies of the answers done before stand only if the list's
    nuggets, their importance and the job's labels (a reworded nugget's are retired) are what they were."""
    world = World(random.Random(4), write_file)
    used = _read_ahead_used(monkeypatch)
    _job, last = _job_worked_but_its_last_item(monkeypatch, django_capture_on_commit_callbacks)
    if change == "people":
        for work in world.assign:
            world.assign_finish(work)
        assert ("manual", "manual") in conditions_list()
        item_process(last)
        assert used == [stands]
        assert_kept_equal_rebuild()
        return
    work = world.nugget_works[0]
    nugget_set_reopen(work_id=work.pk, by=world.organizer, reason="a change", confirmed=True)
    nugget = nugget_set_of(work).nuggets.order_by("position").first()
    if change == "edit":
        world._apply(work, "edit", nugget=nugget.pk, text=f"{nugget.text}, reworded")
    elif change == "importance":
        world._apply(work, "importance", nugget=nugget.pk, importance="okay" if nugget.importance == "vital" else "vital")
    elif change == "add":
        world._apply(work, "add", text="a new fact", importance="vital")
    else:
        world._apply(work, "delete", nugget=nugget.pk)
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    item_process(last)
    assert used == [stands]
    assert_kept_equal_rebuild()


def test_an_autoassign_jobs_end_asks_the_conditions_only(llm_server, write_file, monkeypatch):
    """Its labels feed the conditions alone (`JobKind.scored_in`): no other family is asked what the job touched."""
    World(random.Random(4), write_file)
    asked: list[str] = []

    def asking(family):
        def job_scope(job_id: int):
            asked.append(family.name)
            return family.job_scope(job_id)

        return dataclasses.replace(family, job_scope=job_scope)

    monkeypatch.setattr(registry, "score_families", [asking(family) for family in registry.score_families])
    job = auto_assign_job_create(nuggets="manual", name="gpt")
    for item_id in pending_item_ids(job.pk):
        item_process(item_id)
    assert asked == ["conditions"]
    assert_kept_equal_rebuild()


def _written_ahead(job: Job) -> dict[int, tuple[int, dict]]:
    """answer id -> (row id, values) of the rows written ahead of the job's end, under its hidden source."""
    rows = KeptAnswerScore.objects.filter(source__family=WRITTEN_AHEAD, source__name__startswith=f"{job.pk}:")
    return {answer: (pk, values) for pk, answer, values in rows.values_list("pk", "answer_id", "values")}


def test_a_new_sources_rows_are_written_ahead_unlisted_and_its_end_inserts_only_the_rest(
    llm_server, write_file, monkeypatch, django_capture_on_commit_callbacks
):
    """While the job's last items are out, the rows of the answers done are written under a hidden source, which no
    listing shows; the end names it and inserts the rows of the answers done since: those written ahead keep their
    row."""
    World(random.Random(4), write_file)
    job, last = _job_worked_but_its_last_item(monkeypatch, django_capture_on_commit_callbacks)
    ahead = _written_ahead(job)
    items = JobItem.objects.filter(job=job).order_by("pk").values_list("payload", flat=True)
    answers = [payload["answer"] for payload in items]
    # Read ahead when two items were left: the four done then have their rows.
    assert sorted(ahead) == sorted(answers[:4])
    assert ("manual", "gpt") not in conditions_list()
    assert not KeptSource.objects.filter(family=WRITTEN_AHEAD).exists()
    assert all(family != WRITTEN_AHEAD for family, _columns in kept_scores_of_run(RUNS[0]))
    item_process(last)
    assert not KeptSource.written_ahead.exists()
    kept = KeptAnswerScore.objects.filter(source__family="conditions", source__name="manual/gpt")
    rows = dict(kept.values_list("answer_id", "pk"))
    assert sorted(rows) == sorted(answers)
    assert {answer: rows[answer] for answer in ahead} == {answer: pk for answer, (pk, _values) in ahead.items()}
    assert_kept_equal_rebuild()


def test_rows_written_ahead_whose_figures_changed_before_the_end_are_written_again(
    llm_server, write_file, monkeypatch, django_capture_on_commit_callbacks
):
    """A nugget added to one topic's list between the read ahead and the end (none of the job's labels are of it):
    the rows whose figures it changed are deleted and written anew, the others kept, and the kept scores are the
    labels' (the read ahead is read again)."""
    world = World(random.Random(4), write_file)
    job, last = _job_worked_but_its_last_item(monkeypatch, django_capture_on_commit_callbacks)
    ahead = _written_ahead(job)
    work = world.nugget_works[0]
    nugget_set_reopen(work_id=work.pk, by=world.organizer, reason="a change", confirmed=True)
    world._apply(work, "add", text="a fact no answer was judged on", importance="vital")
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    item_process(last)
    kept = KeptAnswerScore.objects.filter(source__family="conditions", source__name="manual/gpt")
    rows = {answer: (pk, values) for pk, answer, values in kept.values_list("pk", "answer_id", "values")}
    changed = [answer for answer, (_pk, values) in ahead.items() if rows[answer][1] != values]
    assert changed and len(changed) < len(ahead)  # the first topic's answers, not the second's
    for answer, (pk, _values) in ahead.items():
        assert (rows[answer][0] == pk) == (answer not in changed), answer
    assert not KeptSource.written_ahead.exists()
    assert_kept_equal_rebuild()


def test_rows_another_process_wrote_ahead_are_deleted_by_the_end_and_by_a_cancel(
    llm_server, write_file, monkeypatch, django_capture_on_commit_callbacks
):
    """The end's process did not write them (this one forgot what it wrote): it writes every row itself, and deletes
    the hidden source. A cancelled job's are deleted at once."""
    from assessor.scoring import written_ahead

    World(random.Random(4), write_file)
    job, last = _job_worked_but_its_last_item(monkeypatch, django_capture_on_commit_callbacks)
    assert _written_ahead(job)
    written_ahead._kept.drop(job.pk)
    item_process(last)
    assert not KeptSource.written_ahead.exists()
    source = KeptSource.objects.get(family="conditions", name="manual/gpt")
    assert not KeptAnswerScore.objects.filter(source__family=WRITTEN_AHEAD).exists()
    assert KeptAnswerScore.objects.filter(source=source).count() == 6
    assert_kept_equal_rebuild()

    again, _last = _job_worked_but_its_last_item(monkeypatch, django_capture_on_commit_callbacks, name="gpt2")
    assert _written_ahead(again)
    assert engine.job_cancel(again.pk)
    assert not KeptSource.written_ahead.exists() and not _written_ahead(again)
