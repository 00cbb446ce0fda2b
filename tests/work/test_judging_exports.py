"""What assessors judge on the pages reaches the exports of the collection (NIST's formats)."""

import json

import pytest

from assessor.scoring.lifecycle import open_work_included
from assignment import judging
from assignment.exporting import assignments_lines
from support import kinds as support_kinds
from support import services
from support.exporting import support_lines
from tests.scenarios import give_assign, give_support, make_scenario

pytestmark = pytest.mark.django_db


def test_manual_assign_labels_are_exported_under_the_condition():
    scenario = make_scenario()
    work = give_assign(scenario)
    order = judging.answer_order(work=work)
    for number in (1, 2, 3):
        for nugget, label in zip(scenario.nuggets, ["support", "partial_support", "not_support"], strict=False):
            judging.assignment_label_save(
                work_id=work.pk, user=scenario.assessor, number=number, nugget_id=nugget.pk,
                label=label, previous="", expected_version=work.version,
            )
    # Open work is provisional: exported only when the organizer includes it.
    with pytest.raises(LookupError):
        list(assignments_lines(nuggets="manual", assigner="manual"))
    with open_work_included():
        rows = [json.loads(line) for line in assignments_lines(nuggets="manual", assigner="manual")]
    assert len(rows) == 3
    run_of = {answer.pk: answer.run.run_id for answer in scenario.answers}
    assert sorted(row["run_id"] for row in rows) == sorted(run_of[answer_id] for answer_id in order)
    text = json.dumps(rows)
    for nugget_text, _ in [(n.text, n) for n in scenario.nuggets]:
        assert nugget_text in text
    assert "LLMSECRETNUGGET" not in text  # another condition's nuggets stay out


def test_post_edited_support_labels_are_exported_under_their_method():
    scenario = make_scenario()
    work = give_support(scenario, support_kinds.SUPPORT_POSTEDIT)
    services.support_label_save(
        work_id=work.pk, user=scenario.assessor, number=1, sentence_index=0, label="0",
        previous="", expected_version=work.version,
    )
    with open_work_included():
        rows = [json.loads(line) for line in support_lines(method="postedit")]
    assert len(rows) == 1
    supports = [c.get("support") for s in rows[0]["sentences"] for c in s["citations"]]
    assert "0" in supports and "1" not in supports  # the final label, not the LLM's PS
