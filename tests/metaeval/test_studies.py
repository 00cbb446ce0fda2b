"""The disagreement study: sampling from a seed, the independent assessor's blind work, and the report."""

import hashlib
import random

import pytest
from django.test import Client
from django.urls import reverse

from assessor.jobs.engine import job_run_sync
from assessor.models import AssessorWork, Citation, LabelSource
from assessor.work.roles import Role
from assignment import judging
from assignment import kinds as assignment_kinds
from assignment.models import AssignmentLabel
from metaeval.models import Study
from metaeval.studies import StudyError, disagreements, disagreements_sample, study_create, study_report
from support import kinds as support_kinds
from support import services
from support.judging import support_page_load, topic_pairs
from tests.builders import make_assignment_label, make_support_label, make_user
from tests.scenarios import Scenario

pytestmark = pytest.mark.django_db

FS, PS, NS = 2, 1, 0


# --- Sampling: pure ------------------------------------------------------------------------


def test_disagreements_are_the_items_both_labelled_differently():
    a = {"t1": {(1,): "NS", (2,): "PS", (3,): "FS", (4,): "FS"}, "t2": {(9,): "NS"}}
    b = {"t1": {(1,): "NS", (2,): "FS", (3,): "NS", (4,): "FS", (5,): "NS"}, "t2": {(9,): "NS"}, "t3": {(7,): "FS"}}
    assert disagreements(a, b) == {"t1": [(2,), (3,)]}


def many_disagreements() -> dict[str, list[tuple[int, int]]]:
    return {f"t{topic}": [(topic * 100 + i, i % 7) for i in range(40)] for topic in range(3)}


def test_the_sample_is_k_disagreements_per_topic_and_the_same_for_the_same_seed():
    disagreeing = many_disagreements()
    sample = disagreements_sample(disagreeing, k=15, seed=42)
    assert sample == disagreements_sample({t: list(reversed(i)) for t, i in disagreeing.items()}, k=15, seed=42)
    for topic, items in sample.items():
        assert len(items) == len(set(items)) == 15
        assert set(items) <= set(disagreeing[topic])
    assert disagreements_sample(disagreeing, k=15, seed=43) != sample


def test_the_sample_follows_the_documented_draw():
    """Per topic: the sorted items drawn by random.Random seeded with the first 8 bytes of sha256('seed:topic')."""
    disagreeing = many_disagreements()
    sample = disagreements_sample(disagreeing, k=5, seed=7)
    assert sorted(sample) == ["t0", "t1", "t2"]
    for topic, items in disagreeing.items():
        seed = int.from_bytes(hashlib.sha256(f"7:{topic}".encode()).digest()[:8], "big")
        assert sample[topic] == random.Random(seed).sample(sorted(items), 5)


def test_a_topic_with_fewer_disagreements_than_k_gives_them_all():
    sample = disagreements_sample({"t1": [(3,), (1,), (2,)], "t2": [(5,)]}, k=15, seed=1)
    assert sorted(sample["t1"]) == [(1,), (2,), (3,)] and sample["t2"] == [(5,)]
    with pytest.raises(StudyError):
        disagreements_sample({"t1": [(1,)]}, k=0, seed=1)


# --- A support study on the judging scenario ---------------------------------------------------

# The judgeable pairs of the scenario: (answer index, sentence index). Answer 2's sentence 2 cites a
# segment without text: it cannot be shown, so it is never sampled.
PAIRS = [(0, 0), (1, 0), (2, 0), (0, 2), (1, 2)]
SOURCE_A = [FS, FS, PS, NS, FS]
SOURCE_B = [NS, PS, FS, FS, NS]  # disagrees with a on every pair
ASSESSOR = [FS, NS, PS, FS, FS]


def citation_of(scenario: Scenario, answer: int, sentence: int) -> Citation:
    return Citation.objects.get(sentence__answer=scenario.answers[answer], sentence__index=sentence, position=0)


def plant_support_sources(scenario: Scenario) -> None:
    for (answer, sentence), a, b in zip(PAIRS, SOURCE_A, SOURCE_B, strict=True):
        make_support_label(scenario.answers[answer], sentence, a, method="nist-a")
        make_support_label(scenario.answers[answer], sentence, b, method="nist-b")
    # They disagree on the pair without text too, and agree on nothing else.
    make_support_label(scenario.answers[2], 2, FS, method="nist-a")
    make_support_label(scenario.answers[2], 2, NS, method="nist-b")


def support_study(scenario: Scenario, **kw):
    plant_support_sources(scenario)
    options = {"k": 15, "seed": 11, **kw}
    return study_create(
        name="study-support",
        family="support",
        source_a="nist-a",
        source_b="nist-b",
        assessor=scenario.assessor,
        by=scenario.organizer,
        **options,
    )


def judge_all(work: AssessorWork, labels: dict[int, int]) -> None:
    """The assessor judges every pair of the work through the service (citation id -> label), then submits."""
    pairs = topic_pairs(work=work)
    for number, answer_id in enumerate(pairs.order, start=1):
        for citation_id in pairs.pairs_of[answer_id]:
            index = Citation.objects.get(pk=citation_id).sentence.index
            services.support_label_save(
                work_id=work.pk, user=work.assessor, number=number, sentence_index=index,
                label=labels[citation_id], previous="", expected_version=work.version,
            )  # fmt: skip
    services.support_submit(work_id=work.pk, user=work.assessor, expected_version=work.version)


def test_a_study_gives_the_judgeable_disagreements_as_restricted_blind_work(scenario):
    study = support_study(scenario, k=3)
    work = AssessorWork.objects.get(source=study.judge)
    judgeable = {citation_of(scenario, a, s).pk for a, s in PAIRS}
    assert work.kind == support_kinds.SUPPORT_SCRATCH and work.independent
    assert len(work.items) == 3 and set(work.items) <= judgeable
    assert study.sample == {scenario.topic.pk: work.items}
    assert study.judge.kind == LabelSource.Kind.PERSON and study.created_by == scenario.organizer
    # The same labels, k and seed draw the same sample.
    again = study_create(
        name="study-again", family="support", source_a="nist-a", source_b="nist-b",
        assessor=make_user(Role.ASSESSOR), by=None, k=3, seed=11,
    )  # fmt: skip
    assert again.sample == study.sample


def test_the_independent_assessor_sees_only_the_sample_in_its_order_and_no_earlier_label(scenario):
    study = support_study(scenario)
    work = AssessorWork.objects.get(source=study.judge)
    assert len(work.items) == 5  # the five judgeable pairs; the one without text is left out
    pairs = topic_pairs(work=work)
    shown_order = [c for answer in pairs.order for c in sorted(pairs.pairs_of[answer])]
    first_seen = list(dict.fromkeys(Citation.objects.get(pk=c).sentence.answer_id for c in work.items))
    assert pairs.order == first_seen and sorted(shown_order) == sorted(work.items)
    for number in range(1, len(pairs.order) + 1):
        page = support_page_load(work=work, number=number)
        assert all(row.label is None and row.shown is None for row in page.rows)
    client = Client()
    client.force_login(scenario.assessor)
    body = client.get(reverse("support:answer", args=[work.pk, 1])).content.decode()
    for secret in ["nist-a", "nist-b", "study", "disagree", *scenario.forbidden()]:
        assert secret not in body
    assert 'aria-pressed="true"' not in body


def test_the_person_who_made_one_of_the_labels_is_not_the_independent_assessor(scenario):
    plant_support_sources(scenario)
    first = services.support_work_give(
        topic=scenario.topic, assessor=scenario.assessor, kind=support_kinds.SUPPORT_SCRATCH, by=None
    )
    judge_all(first, {citation_of(scenario, a, s).pk: label for (a, s), label in zip(PAIRS, SOURCE_A, strict=True)})
    with pytest.raises(StudyError, match="independent judging needs someone else"):
        study_create(
            name="study-mine", family="support", source_a=first.source.name, source_b="nist-b",
            assessor=scenario.assessor, by=None, seed=1,
        )  # fmt: skip


def test_sources_that_never_disagree_make_no_study(scenario):
    make_support_label(scenario.answers[0], 0, FS, method="same-a")
    make_support_label(scenario.answers[0], 0, FS, method="same-b")
    with pytest.raises(StudyError, match="disagree on no item"):
        study_create(
            name="nothing", family="support", source_a="same-a", source_b="same-b",
            assessor=scenario.assessor, by=None, seed=1,
        )  # fmt: skip
    assert not LabelSource.objects.filter(name="nothing").exists()


def test_the_report_gives_kappa_between_every_pair_of_judges_as_computed_by_hand(scenario):
    study = support_study(scenario)
    work = AssessorWork.objects.get(source=study.judge)
    by_citation = {citation_of(scenario, a, s).pk: label for (a, s), label in zip(PAIRS, ASSESSOR, strict=True)}
    report = study_report(study)
    assert [len(judge.labels) for judge in report.judges] == [5, 5, 0]  # open work is not counted
    assert report.open_topics == [scenario.topic.pk]
    judge_all(work, by_citation)
    report = study_report(study)
    kappas = {(p.first.role, p.second.role): p.confusion.kappa for p in report.pairs}
    # a: FS FS PS NS FS, b: NS PS FS FS NS, assessor: FS NS PS FS FS.
    # a-b: p_o 0, p_e (3*2 + 1*1 + 1*2)/25 = 9/25 -> -0.36/0.64.
    assert kappas[("a", "b")] == pytest.approx(-0.5625)
    # a-assessor: p_o 3/5, p_e (3*3 + 1*1 + 1*1)/25 = 11/25 -> 0.16/0.56 = 2/7.
    assert kappas[("a", "assessor")] == pytest.approx(2 / 7)
    # b-assessor: p_o 1/5, p_e (2*3 + 1*1 + 2*1)/25 = 9/25 -> -0.16/0.64.
    assert kappas[("b", "assessor")] == pytest.approx(-0.25)
    (sided,) = report.sided
    assert (sided.with_a, sided.with_b, sided.neither) == (3, 1, 1)
    distributions = {judge.role: judge.distribution(report.labels) for judge in report.judges}
    assert report.labels == ["NS", "PS", "FS"]
    assert distributions == {"a": [1, 1, 3], "b": [2, 1, 2], "assessor": [1, 1, 3]}
    assert report.open_topics == []


# --- A nugget assignment study -----------------------------------------------------------------


def test_an_assignment_study_restricts_the_manual_assign_page_to_the_sampled_nuggets(scenario):
    labels_a = ["support", "partial_support", "not_support"]
    for answer in scenario.answers:
        for nugget, value in zip(scenario.nuggets, labels_a, strict=True):
            make_assignment_label(answer, nugget, value, assigner="nist-a")
            # b disagrees on the first nugget only of every answer.
            other = "not_support" if nugget == scenario.nuggets[0] else value
            make_assignment_label(answer, nugget, other, assigner="nist-b")
    study = study_create(
        name="study-assign", family="assignment", source_a="nist-a", source_b="nist-b", nugget_set="manual",
        assessor=scenario.assessor, by=scenario.organizer, k=2, seed=5,
    )  # fmt: skip
    work = AssessorWork.objects.get(source=study.judge)
    first_nugget = scenario.nuggets[0].pk
    assert len(work.items) == 2 and all(nugget == first_nugget for _answer, nugget in work.items)
    assert work.kind == assignment_kinds.ASSIGN_MANUAL and work.nugget_set_name == "manual"
    assert judging.answer_order(work=work) == [answer for answer, _nugget in work.items]
    page = judging.assign_page_load(work=work)
    assert [n.pk for n in page.nuggets] == [first_nugget] and page.labels == {} and page.labels_total == 2
    # The nuggets outside the sample cannot be labelled in this work.
    with pytest.raises(judging.JudgeError):
        judging.assignment_label_save(
            work_id=work.pk, user=work.assessor, number=1, nugget_id=scenario.nuggets[1].pk,
            label="support", previous="", expected_version=work.version,
        )  # fmt: skip
    for number in (1, 2):
        judging.assignment_label_save(
            work_id=work.pk, user=work.assessor, number=number, nugget_id=first_nugget,
            label="support", previous="", expected_version=work.version,
        )  # fmt: skip
    judging.assign_submit(work_id=work.pk, user=work.assessor, expected_version=work.version)
    report = study_report(study)
    (sided,) = report.sided
    assert (sided.with_a, sided.with_b, sided.neither) == (2, 0, 0)
    assert AssignmentLabel.objects.filter(work=work).count() == 2


def test_an_llm_judge_is_queued_on_the_sampled_answers_with_the_same_prompt(scenario, llm_server):
    study = support_study(scenario, k=2, llm_name="study-llm")
    job = study.llm_job
    sampled_answers = {Citation.objects.get(pk=c).sentence.answer_id for c in study.sample[scenario.topic.pk]}
    assert job is not None and job.output_name == "study-llm" and job.prompt_versions.keys() == {"support"}
    assert {item.payload["answer"] for item in job.items.all()} == sampled_answers


def test_the_llm_judge_of_a_study_runs_on_the_endpoint_chosen(scenario, two_llm_endpoints):
    study = support_study(scenario, k=2, llm_name="study-beta", llm_endpoint="beta")
    job = study.llm_job
    assert (job.endpoint_name, job.model) == ("beta", "model-beta")
    job_run_sync(job.pk)
    # Every call of the job went to beta's own server, none to alpha's (the default's).
    assert two_llm_endpoints["beta"].count == job.llm_calls.count() >= job.items.count() > 0
    assert two_llm_endpoints["alpha"].count == 0
    source = LabelSource.objects.get(family="support", name="study-beta")
    assert (source.kind, source.endpoint_name, source.model) == ("llm", "beta", "model-beta")


def test_a_study_refuses_an_endpoint_that_does_not_exist(scenario, llm_server):
    with pytest.raises(StudyError, match="The LLM judge cannot start: .*nowhere"):
        support_study(scenario, k=2, llm_name="study-x", llm_endpoint="nowhere")
    assert not Study.objects.exists()


def test_a_sampled_nugget_removed_from_the_list_is_no_longer_asked_for(scenario):
    first, second, third = scenario.nuggets
    for answer in scenario.answers:
        for nugget in scenario.nuggets:
            make_assignment_label(answer, nugget, "support", assigner="nist-a")
            make_assignment_label(answer, nugget, "support" if nugget == third else "not_support", assigner="nist-b")
    study = study_create(
        name="study-removed", family="assignment", source_a="nist-a", source_b="nist-b", nugget_set="manual",
        assessor=scenario.assessor, by=None, seed=2,
    )  # fmt: skip
    work = AssessorWork.objects.get(source=study.judge)
    assert sorted(nugget for _answer, nugget in work.items) == sorted([first.pk, second.pk] * 3)
    second.delete()
    assert judging.assign_page_load(work=work).labels_total == 3
    for number in (1, 2, 3):
        judging.assignment_label_save(
            work_id=work.pk, user=work.assessor, number=number, nugget_id=first.pk,
            label="partial_support", previous="", expected_version=work.version,
        )  # fmt: skip
    judging.assign_submit(work_id=work.pk, user=work.assessor, expected_version=work.version)
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
