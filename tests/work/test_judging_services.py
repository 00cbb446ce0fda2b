"""ManualAssign and support judging services: order, saves with their checks, time, submit and reopen."""

import hashlib
import random

import pytest
from django.http import Http404

from assessor.models import AssessorWork, Citation, WorkEvent
from assessor.work import judging as core
from assessor.work.services import WorkError
from assignment import judging
from assignment.models import AssignmentLabel
from nuggets.models import Nugget, NuggetSet
from support import kinds as support_kinds
from support import services
from support.judging import support_page_load, support_progress, topic_pairs
from support.models import SupportLabel
from tests.scenarios import LLM_METHOD, LLM_NUGGET_TEXTS, Scenario, give_assign, give_support, make_scenario

pytestmark = pytest.mark.django_db

def expected_order(scenario: Scenario) -> list[int]:
    """The order computed independently: sorted ids shuffled by a SHA-256 seed of 'assessor:topic'."""
    ids = sorted(answer.pk for answer in scenario.answers)
    seed = int(hashlib.sha256(f"{scenario.assessor.pk}:{scenario.topic.pk}".encode()).hexdigest()[:16], 16)
    random.Random(seed).shuffle(ids)
    return ids


# --- Order ---------------------------------------------------------------------------------


def test_the_order_is_fixed_per_assessor_and_topic_and_differs_between_assessors():
    ids = list(range(1, 41))
    first = core.shuffled(ids, assessor_id=7, topic_id="2024-1")
    assert core.shuffled(list(reversed(ids)), assessor_id=7, topic_id="2024-1") == first
    assert sorted(first) == ids and first != ids
    assert core.shuffled(ids, assessor_id=8, topic_id="2024-1") != first
    assert core.shuffled(ids, assessor_id=7, topic_id="2024-2") != first


def test_answer_order_matches_an_independent_computation(scenario):
    work = give_assign(scenario)
    assert judging.answer_order(work=work) == expected_order(scenario)


def test_first_incomplete_wraps_around():
    assert core.first_incomplete([3, 1, 3, 0], needed=3) == 1
    assert core.first_incomplete([3, 1, 3, 0], needed=3, start=2) == 3
    assert core.first_incomplete([3, 1, 3, 3], needed=3, start=2) == 1
    assert core.first_incomplete([3, 3], needed=3) is None


# --- ManualAssign ------------------------------------------------------------------------------


def save(work, number, nugget, label, previous="", version=None):
    return judging.assignment_label_save(
        work_id=work.pk,
        user=work.assessor,
        number=number,
        nugget_id=nugget.pk,
        label=label,
        previous=previous,
        expected_version=work.version if version is None else version,
    )


def test_a_label_is_saved_on_the_answer_at_that_position_with_provenance(scenario):
    work = give_assign(scenario)
    order = expected_order(scenario)
    save(work, 2, scenario.nuggets[1], "support")
    label = AssignmentLabel.objects.get(assigner="manual")
    assert (label.answer_id, label.nugget_id, label.label) == (order[1], scenario.nuggets[1].pk, "support")
    assert label.assigner_kind == "manual" and label.created_by == scenario.assessor
    assert label.seconds_spent == 0  # the first action has no gap before it
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.IN_PROGRESS


def test_a_stale_previous_label_is_a_conflict_and_a_retry_is_not(scenario):
    work = give_assign(scenario)
    nugget = scenario.nuggets[0]
    save(work, 1, nugget, "support")
    # A second tab, loaded before, still shows no label: refused with the current one.
    with pytest.raises(core.JudgeError) as refused:
        save(work, 1, nugget, "not_support", previous="")
    assert refused.value.status == 409 and refused.value.current == "support"
    # The same save again (its answer was lost): accepted, nothing changes.
    save(work, 1, nugget, "support", previous="")
    save(work, 1, nugget, "partial_support", previous="support")
    labels = AssignmentLabel.objects.filter(assigner="manual").values_list("label", flat=True)
    assert list(labels) == ["partial_support"]


def test_time_between_saves_is_credited_to_the_label_and_the_work(settings, scenario):
    from datetime import timedelta

    from django.utils import timezone

    work = give_assign(scenario)
    save(work, 1, scenario.nuggets[0], "support")
    AssessorWork.objects.filter(pk=work.pk).update(last_activity_at=timezone.now() - timedelta(seconds=40))
    save(work, 1, scenario.nuggets[1], "support")
    # Away longer than the idle limit: nothing is credited.
    AssessorWork.objects.filter(pk=work.pk).update(last_activity_at=timezone.now() - timedelta(seconds=4000))
    save(work, 1, scenario.nuggets[2], "support")
    seconds = dict(AssignmentLabel.objects.filter(assigner="manual").values_list("nugget_id", "seconds_spent"))
    assert seconds[scenario.nuggets[0].pk] == 0
    assert 40 <= seconds[scenario.nuggets[1].pk] < 45
    assert seconds[scenario.nuggets[2].pk] == 0
    work.refresh_from_db()
    assert 40 <= work.active_seconds < 45


def test_bad_saves_are_refused(scenario):
    work = give_assign(scenario)
    with pytest.raises(core.JudgeError):
        save(work, 1, scenario.nuggets[0], "maybe")
    with pytest.raises(core.JudgeError):
        save(work, 4, scenario.nuggets[0], "support")
    llm_nugget = Nugget.objects.get(text=LLM_NUGGET_TEXTS[0])
    with pytest.raises(core.JudgeError):
        save(work, 1, llm_nugget, "support")
    with pytest.raises(Http404):
        judging.assignment_label_save(
            work_id=work.pk, user=scenario.organizer, number=1, nugget_id=scenario.nuggets[0].pk,
            label="support", previous="", expected_version=None,
        )


def test_page_focuses_the_next_unlabelled_nugget_and_counts_progress(scenario):
    work = give_assign(scenario)
    save(work, 1, scenario.nuggets[0], "support")
    page = judging.assign_page_load(work=work)
    assert page.number == 1 and page.focus_nugget_id == scenario.nuggets[1].pk
    assert (page.labels_done, page.labels_total, page.answers_done) == (1, 9, 0)
    save(work, 1, scenario.nuggets[1], "not_support")
    save(work, 1, scenario.nuggets[2], "partial_support")
    page = judging.assign_page_load(work=work)
    assert page.number == 2 and page.focus_nugget_id == scenario.nuggets[0].pk
    assert (page.labels_done, page.answers_done, page.next_incomplete) == (3, 1, 3)
    first = judging.assign_page_load(work=work, number=1)
    assert first.labels == {
        scenario.nuggets[0].pk: "support",
        scenario.nuggets[1].pk: "not_support",
        scenario.nuggets[2].pk: "partial_support",
    }
    assert first.focus_nugget_id is None and first.next_incomplete == 2


def test_submit_needs_every_label_freezes_and_a_reopening_is_recorded(scenario):
    work = give_assign(scenario)
    with pytest.raises(WorkError, match="9 label"):
        judging.assign_submit(work_id=work.pk, user=scenario.assessor, expected_version=work.version)
    for number in (1, 2, 3):
        for nugget in scenario.nuggets:
            save(work, number, nugget, "support")
    judging.assign_submit(work_id=work.pk, user=scenario.assessor, expected_version=work.version)
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    with pytest.raises(core.JudgeError) as frozen:
        save(work, 1, scenario.nuggets[0], "not_support", previous="support")
    assert frozen.value.status == 409
    old_version = work.version
    core.judge_work_reopen(work_id=work.pk, by=scenario.organizer, kinds=[work.kind], reason="typo")
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.IN_PROGRESS and work.reopened_count == 1
    actions = WorkEvent.objects.filter(work=work).values_list("action", flat=True)
    assert list(actions) == ["given", "submitted", "reopened"]
    # A page loaded before the reopening is stale.
    with pytest.raises(core.JudgeError):
        save(work, 1, scenario.nuggets[0], "not_support", previous="support", version=old_version)
    save(work, 1, scenario.nuggets[0], "not_support", previous="support")


def test_give_refuses_a_topic_without_a_human_nugget_list(scenario):
    NuggetSet.objects.filter(kind=NuggetSet.Kind.MANUAL).delete()
    with pytest.raises(WorkError, match="no nugget list"):
        give_assign(scenario)


def test_assign_progress_counts_labels_and_seconds(scenario):
    work = give_assign(scenario)
    save(work, 1, scenario.nuggets[0], "support")
    AssignmentLabel.objects.filter(assigner="manual").update(seconds_spent=30)
    (row,) = judging.assign_progress()
    assert (row.answers, row.nuggets, row.labels_done, row.labels_total) == (3, 3, 1, 9)
    # 30 s for one label; three nuggets an answer.
    assert row.seconds_per_answer == 90


# --- Support --------------------------------------------------------------------------------------


def support_save(work, number, sentence, label, previous=""):
    return services.support_label_save(
        work_id=work.pk, user=work.assessor, number=number, sentence_index=sentence,
        label=label, previous=previous, expected_version=work.version,
    )


def test_pairs_are_first_citations_with_text_and_the_rest_is_left_out(scenario):
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    pairs = topic_pairs(work=work)
    # Two pairs per answer (sentences 0 and 2), but the third run's sentence 2 cites a segment without text.
    assert pairs.total == 5
    page = support_page_load(work=work, number=1)
    assert [row.sentence.index for row in page.rows] == [0, 1, 2]
    judged = [row.sentence.index for row in page.pairs]
    assert judged in ([0, 2], [0])
    assert all(row.shown is None for row in page.rows)


def test_scratch_labels_are_saved_without_anything_shown(scenario):
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    label = support_save(work, 1, 0, "2")
    assert (label.method, label.method_kind, label.label, label.shown_label, label.shown_from) == (
        "scratch", "scratch", 2, None, None
    )
    with pytest.raises(services.JudgeError):
        support_save(work, 1, 1, "2")  # an uncited sentence is not a pair
    with pytest.raises(services.JudgeError):
        support_save(work, 1, 0, "-1")


def test_postedit_keeps_the_label_shown_its_source_and_whether_it_changed(scenario):
    work = give_support(scenario, support_kinds.SUPPORT_POSTEDIT)
    assert work.nugget_set_name == LLM_METHOD
    page = support_page_load(work=work, number=1)
    assert {row.shown for row in page.pairs} == {1}
    kept = support_save(work, 1, 0, "1")
    changed = support_save(work, 2, 0, "2")
    llm_first = SupportLabel.objects.get(method=LLM_METHOD, citation=kept.citation)
    assert (kept.shown_label, kept.shown_from, kept.changed) == (1, llm_first, False)
    assert (changed.shown_label, changed.label, changed.changed) == (1, 2, True)
    rows = {row.work.kind: row for row in support_progress()}
    assert (rows["support_postedit"].shown, rows["support_postedit"].changed) == (2, 1)
    assert rows["support_postedit"].change_rate == 0.5


def test_postedit_needs_llm_labels():
    scenario = make_scenario(plant_llm=False)
    with pytest.raises(WorkError, match="no automatic support labels"):
        give_support(scenario, support_kinds.SUPPORT_POSTEDIT)


def test_support_submit_needs_every_pair_and_the_conflict_check_works(scenario):
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    pairs = topic_pairs(work=work)
    for number, answer_id in enumerate(pairs.order, start=1):
        for citation in Citation.objects.filter(pk__in=pairs.pairs_of[answer_id]).select_related("sentence"):
            support_save(work, number, citation.sentence.index, "0")
    with pytest.raises(services.JudgeError) as stale:
        support_save(work, 1, 0, "2", previous="")
    assert stale.value.status == 409 and stale.value.current == 0
    services.support_submit(work_id=work.pk, user=scenario.assessor, expected_version=work.version)
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    assert SupportLabel.objects.filter(method="scratch").count() == 5


def test_a_save_made_on_an_old_order_is_refused_not_put_on_another_answer(scenario):
    from tests.builders import make_answer, make_run

    work = give_assign(scenario)
    old_order = judging.answer_order(work=work)
    tokens = {n: judging.assign_page_load(work=work, number=n).token for n in (1, 2, 3)}
    # Runs imported meanwhile shift the positions. Where a new answer lands in the shuffled order depends on
    # the ids, so late runs come until one of the pages the assessor holds shows another answer.
    moved = None
    for late in range(1, 10):
        make_answer(make_run(f"SECRETRUN-late{late}"), scenario.topic, [("A late answer.", [])])
        new_order = judging.answer_order(work=work)
        moved = next((n for n in (1, 2, 3) if new_order[n - 1] != old_order[n - 1]), None)
        if moved is not None:
            break
    assert moved is not None
    with pytest.raises(core.JudgeError) as refused:
        judging.assignment_label_save(
            work_id=work.pk, user=work.assessor, number=moved, nugget_id=scenario.nuggets[0].pk,
            label="support", previous="", expected_version=work.version, token=tokens[moved],
        )
    assert refused.value.status == 409
    assert not AssignmentLabel.objects.filter(assigner="manual").exists()


def test_tokens_name_answers_opaquely(scenario):
    work = give_assign(scenario)
    tokens = [judging.assign_page_load(work=work, number=n).token for n in (1, 2, 3)]
    assert len(set(tokens)) == 3
    assert all(len(token) == 20 and int(token, 16) >= 0 for token in tokens)
    with pytest.raises(core.JudgeError):
        judging.assignment_label_save(
            work_id=work.pk, user=work.assessor, number=1, nugget_id=scenario.nuggets[0].pk,
            label="support", previous="", expected_version=work.version, token=tokens[1],
        )


def test_labelling_waits_for_the_nugget_list_to_be_submitted(scenario):
    NuggetSet.objects.filter(pk=scenario.nugget_set.pk).update(status=NuggetSet.Status.OPEN)
    work = give_assign(scenario)
    page = judging.assign_page_load(work=work)
    assert page.nuggets_open and page.frozen
    with pytest.raises(core.JudgeError, match="not submitted yet"):
        save(work, 1, scenario.nuggets[0], "support")
