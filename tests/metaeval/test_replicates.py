"""A second assessor: giving a replicate of a human condition, its blindness, and human-human agreement."""

import math

import pytest
from django.test import Client
from django.urls import reverse

from assessor.models import AssessorWork, Citation, Job, LabelSource
from assessor.work.roles import Role
from assessor.work.services import WorkError
from assignment import judging
from assignment import kinds as assignment_kinds
from assignment.models import AssignmentLabel
from metaeval.replicates import replicate_agreement
from support import kinds as support_kinds
from support import services
from support.judging import topic_pairs
from tests.builders import make_assignment_label, make_support_label, make_user
from tests.scenarios import Scenario, give_assign

pytestmark = pytest.mark.django_db

S, P, N = "support", "partial_support", "not_support"
# Per answer (the scenario's three), the labels of its three nuggets.
FIRST = [[S, S, S], [P, P, P], [N, N, N]]
SECOND = [[N, N, N], [P, S, P], [S, S, S]]


def label_all(work: AssessorWork, scenario: Scenario, labels: list[list[str]]) -> None:
    """Label every answer of the work (by the answer's place among the scenario's answers), then submit."""
    order = judging.answer_order(work=work)
    for number, answer_id in enumerate(order, start=1):
        row = labels[[a.pk for a in scenario.answers].index(answer_id)]
        for nugget, value in zip(scenario.nuggets, row, strict=True):
            judging.assignment_label_save(
                work_id=work.pk, user=work.assessor, number=number, nugget_id=nugget.pk,
                label=value, previous="", expected_version=work.version,
            )  # fmt: skip
    judging.assign_submit(work_id=work.pk, user=work.assessor, expected_version=work.version)


def give_replicate(scenario: Scenario, assessor=None) -> AssessorWork:
    return judging.assign_replicate_give(
        topic=scenario.topic,
        assessor=assessor or make_user(Role.ASSESSOR),
        by=scenario.organizer,
        of_assigner="manual",
        assigner_name="manual-2",
    )


def test_a_replicate_is_its_own_people_source_marked_as_a_replicate_of_the_first(scenario):
    first = give_assign(scenario)
    second = give_replicate(scenario)
    assert second.source.kind == LabelSource.Kind.PERSON and second.source.name == "manual-2"
    assert second.source.replicate_of == first.source
    assert second.independent and not first.independent
    assert second.nugget_set_name == first.nugget_set_name and second.assessor != first.assessor
    assert judging.answer_order(work=second) != [] and second.items == []
    assert second.events.get().detail["blind_to"] == ["manual"]


def test_the_first_person_cannot_be_their_own_replicate_and_only_human_work_has_one(scenario):
    give_assign(scenario)
    with pytest.raises(WorkError, match="independent judging needs someone else"):
        give_replicate(scenario, assessor=scenario.assessor)
    # The planted LLM labels came from a file: an LLM's labels, whoever imported them, have no second assessor.
    with pytest.raises(WorkError, match="only a human condition has a second assessor"):
        judging.assign_replicate_give(
            topic=scenario.topic, assessor=make_user(), by=None, of_assigner="gpt-secret-assigner", assigner_name="x"
        )
    with pytest.raises(WorkError, match="a name of its own"):
        judging.assign_replicate_give(
            topic=scenario.topic, assessor=make_user(), by=None, of_assigner="manual", assigner_name="manual"
        )


def test_a_support_replicate_is_from_scratch_and_post_editing_has_none(scenario):
    first = services.support_work_give(
        topic=scenario.topic, assessor=scenario.assessor, kind=support_kinds.SUPPORT_SCRATCH, by=None
    )
    second = services.support_replicate_give(
        topic=scenario.topic, assessor=make_user(), by=None, of_method="scratch", method_name="scratch-2"
    )
    assert second.kind == support_kinds.SUPPORT_SCRATCH and second.source.replicate_of == first.source
    services.support_work_give(
        topic=scenario.topic, assessor=scenario.assessor, kind=support_kinds.SUPPORT_POSTEDIT, by=None
    )
    with pytest.raises(WorkError, match="only from-scratch judging has one"):
        services.support_replicate_give(
            topic=scenario.topic, assessor=make_user(), by=None, of_method="postedit", method_name="postedit-2"
        )


def test_the_replicate_sees_none_of_the_first_persons_labels_nor_any_llm_output(scenario):
    first = give_assign(scenario)
    label_all(first, scenario, FIRST)
    second = give_replicate(scenario)
    for number in (1, 2, 3):
        assert judging.assign_page_load(work=second, number=number).labels == {}
    client = Client()
    client.force_login(second.assessor)
    for number in (1, 2, 3):
        body = client.get(reverse("judge:answer", args=[second.pk, number])).content.decode()
        assert 'aria-pressed="true"' not in body
        for secret in scenario.forbidden():
            assert secret not in body


def make_llm_labels(scenario: Scenario, labels: list[list[str]]) -> None:
    """An LLM assigner's finished job with these labels on the scenario's answers."""
    job = Job.objects.create(
        kind=assignment_kinds.AUTO_ASSIGN, output_name="llm-judge", model="fake-llm", status=Job.Status.DONE
    )
    source = LabelSource.objects.create(
        family="assignment", name="llm-judge", kind=LabelSource.Kind.LLM, model="fake-llm", job=job
    )
    AssignmentLabel.objects.bulk_create(
        AssignmentLabel(
            answer=answer,
            nugget=nugget,
            assigner="llm-judge",
            assigner_kind="auto",
            source=source,
            label=value,
            job=job,
        )  # fmt: skip
        for answer, row in zip(scenario.answers, labels, strict=True)
        for nugget, value in zip(scenario.nuggets, row, strict=True)
    )


def test_human_human_agreement_stands_beside_human_llm_agreement_as_computed_by_hand(scenario):
    first = give_assign(scenario)
    label_all(first, scenario, FIRST)
    second = give_replicate(scenario)
    make_llm_labels(scenario, FIRST)
    assert replicate_agreement(second.source).topics == []  # the replicate's work is open: nothing counts
    label_all(second, scenario, SECOND)
    agreement = replicate_agreement(second.source)
    assert agreement.topics == [scenario.topic.pk] and agreement.nugget_set == "manual"
    # Rows first, columns replicate, in the order not_support, partial_support, support:
    # first support -> replicate not_support x3; partial -> partial x2, support x1; not_support -> support x3.
    assert agreement.human.counts == [[0, 0, 3], [0, 2, 1], [3, 0, 0]]
    # p_o = 2/9; marginals first 3/3/3, replicate 3/2/4: p_e = 27/81 = 1/3; kappa = (2/9 - 1/3) / (2/3).
    assert agreement.human.kappa == pytest.approx(-1 / 6)
    (llm,) = agreement.llms
    assert llm.name == "llm-judge" and llm.items == 9
    assert llm.with_first.kappa == pytest.approx(1.0)
    assert llm.with_replicate.kappa == pytest.approx(-1 / 6)
    taus = {tau.metric: tau.tau_run for tau in agreement.taus}
    # A: first 1, 1/2, 0 against the replicate's 0, 2/3, 1: the order reversed.
    assert taus["A"] == pytest.approx(-1.0)
    # Astrict: first 1, 0, 0 against 0, 1/3, 1: C = 0, D = 2, one tie in the first: -2 / sqrt(2 * 3).
    assert taus["Astrict"] == pytest.approx(-2 / math.sqrt(6))


# --- A second assessor beside imported people's labels (NIST's) ----------------------------------


def import_nist_assignment(scenario: Scenario, labels: list[list[str]]) -> None:
    """NIST's ManualAssign labels as an import leaves them: a file's people's labels, no work."""
    for answer, row in zip(scenario.answers, labels, strict=True):
        for nugget, value in zip(scenario.nuggets, row, strict=True):
            make_assignment_label(answer, nugget, value, assigner="nist", kind="manual")


def test_a_replicate_of_imported_people_s_assignment_is_blind_to_it_and_agreement_is_computed(scenario):
    import_nist_assignment(scenario, FIRST)
    second = judging.assign_replicate_give(
        topic=scenario.topic, assessor=make_user(), by=scenario.organizer, of_assigner="nist", assigner_name="second"
    )
    nist = LabelSource.objects.get(family="assignment", name="nist")
    assert nist.kind == LabelSource.Kind.FILE and second.source.replicate_of == nist
    assert second.nugget_set_name == scenario.nugget_set.name and second.independent
    for number in (1, 2, 3):  # blind to the file's labels
        assert judging.assign_page_load(work=second, number=number).labels == {}
    label_all(second, scenario, SECOND)
    agreement = replicate_agreement(second.source)
    # The same table as between two people (above): NIST's labels in rows, the replicate's in columns.
    assert agreement.first == "nist" and agreement.human.counts == [[0, 0, 3], [0, 2, 1], [3, 0, 0]]
    assert agreement.human.kappa == pytest.approx(-1 / 6)


def test_imported_llm_assignment_has_no_second_assessor(scenario):
    for answer in scenario.answers:
        make_assignment_label(answer, scenario.nuggets[0], S, assigner="gpt-file", kind="auto")
    with pytest.raises(WorkError, match="not people's assignment"):
        judging.assign_replicate_give(
            topic=scenario.topic, assessor=make_user(), by=None, of_assigner="gpt-file", assigner_name="second"
        )
    with pytest.raises(WorkError, match="no ManualAssign work under the assigner 'nobody'"):
        judging.assign_replicate_give(
            topic=scenario.topic, assessor=make_user(), by=None, of_assigner="nobody", assigner_name="second"
        )


def test_a_support_replicate_of_imported_from_scratch_labels_judges_their_pairs_blind(scenario):
    # NIST judged two pairs from scratch; one more sentence of the scenario cites a passage nobody judged.
    judged = [(0, 0, 2), (1, 0, 0)]
    for answer, sentence, value in judged:
        make_support_label(scenario.answers[answer], sentence, value, method="nist-scratch", kind="scratch")
    second = services.support_replicate_give(
        topic=scenario.topic, assessor=make_user(), by=None, of_method="nist-scratch", method_name="second"
    )
    expected = set(
        Citation.objects.filter(
            position=0, sentence__index=0, sentence__answer__in=[scenario.answers[0], scenario.answers[1]]
        ).values_list("pk", flat=True)
    )
    assert set(second.items) == expected and second.source.replicate_of.name == "nist-scratch"
    pairs = topic_pairs(work=second)
    assert pairs.total == 2 and pairs.done == {}
    # Post-editing imported labels have no replicate, as post-editing work has none.
    make_support_label(scenario.answers[2], 0, 1, method="nist-postedit", kind="postedit")
    with pytest.raises(WorkError, match="only from-scratch judging has one"):
        services.support_replicate_give(
            topic=scenario.topic, assessor=make_user(), by=None, of_method="nist-postedit", method_name="second-pe"
        )
