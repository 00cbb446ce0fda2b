"""The nugget workspace operations: lineage, version check, edit log, undo, submit and reopen."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assessor.models import AssessorWork, Qrel, WorkEvent, WorkOperation
from assessor.work.roles import Role
from nuggets import workspace as rules
from nuggets.models import Nugget, NuggetEdit, NuggetSet
from nuggets.services import nugget_operation_apply, nugget_set_reopen, nugget_set_submit
from nuggets.undo import nugget_undo
from tests.builders import make_user
from tests.scenarios import make_given_topic, nugget_set_of, texts_of

pytestmark = pytest.mark.django_db


def apply(work, operation, **params):
    """Apply an operation at the set's current version, as a fresh browser tab would."""
    version = nugget_set_of(work).version
    return nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation=operation, params=params, expected_version=version
    )


def ids_of(work):
    return list(nugget_set_of(work).nuggets.order_by("position").values_list("id", flat=True))


def state_of(work):
    """Everything undo must restore: order, texts, importance, origin, lineage (as draft texts), source."""
    rows = []
    for nugget in nugget_set_of(work).nuggets.order_by("position").prefetch_related("derived_from"):
        drafts = sorted(d.text for d in nugget.derived_from.all())
        rows.append((nugget.pk, nugget.position, nugget.text, nugget.importance, nugget.origin, drafts, nugget.source_segment_id))
    return rows


# --- ManualNuggets ----------------------------------------------------------


def test_a_manual_list_is_written_from_nothing():
    work = make_given_topic(condition="manual")
    assert texts_of(work) == []
    first = apply(work, "add", text="  Nuggets  are   atomic facts ", importance="vital").focus_id
    apply(work, "add", text="Assessors label vital or okay")
    apply(work, "add", text="Inserted after the first", after=str(first))
    assert texts_of(work) == ["Nuggets are atomic facts", "Inserted after the first", "Assessors label vital or okay"]
    nuggets = list(nugget_set_of(work).nuggets.order_by("position"))
    assert [n.position for n in nuggets] == [0, 1, 2]
    assert all(n.created_by_id == work.assessor.pk and n.origin == "" for n in nuggets)
    assert nugget_set_of(work).version == 3


def test_edit_importance_move_and_delete():
    work = make_given_topic(condition="manual")
    for text in ["one", "two", "three"]:
        apply(work, "add", text=text)
    one, two, three = ids_of(work)
    apply(work, "edit", nugget=one, text="one, reworded")
    apply(work, "importance", nugget=two, importance="okay")
    apply(work, "move", nugget=three, to="0")
    assert texts_of(work) == ["three", "one, reworded", "two"]
    apply(work, "delete", nugget=one)
    assert texts_of(work) == ["three", "two"]
    assert [n.position for n in nugget_set_of(work).nuggets.order_by("position")] == [0, 1]
    assert Nugget.objects.get(pk=two).importance == "okay"


def test_manual_nuggets_stop_at_twenty_with_a_clear_message():
    work = make_given_topic(condition="manual")
    for index in range(20):
        apply(work, "add", text=f"fact {index}")
    with pytest.raises(rules.CapReached, match="at most 20 nuggets"):
        apply(work, "add", text="one too many")
    with pytest.raises(rules.CapReached):
        apply(work, "split", nugget=ids_of(work)[0], texts="a\nb")
    assert nugget_set_of(work).nuggets.count() == 20


def test_a_source_segment_must_be_one_the_assessor_is_shown():
    work = make_given_topic(condition="manual", grades=[2, 0])
    relevant, irrelevant = Qrel.objects.filter(topic_id=work.topic_id).order_by("-grade").values_list("segment_id", flat=True)
    nugget = apply(work, "add", text="a fact").focus_id
    apply(work, "source", nugget=nugget, segment=relevant)
    assert Nugget.objects.get(pk=nugget).source_segment_id == relevant
    with pytest.raises(rules.InvalidOperation, match="not one of this topic's relevant segments"):
        apply(work, "source", nugget=nugget, segment=irrelevant)


# --- AutoNuggets+Edits: lineage ---------------------------------------------


def test_post_editing_starts_from_the_drafts_without_importance():
    work = make_given_topic(condition="auto_edit", drafts=["d0", "d1", "d2"])
    nugget_set = nugget_set_of(work)
    assert nugget_set.kind == "auto_edit" and nugget_set.drafts.kind == "draft"
    assert nugget_set.status == NuggetSet.Status.OPEN
    assert state_of(work) == [
        (ids_of(work)[0], 0, "d0", "", "kept", ["d0"], None),
        (ids_of(work)[1], 1, "d1", "", "kept", ["d1"], None),
        (ids_of(work)[2], 2, "d2", "", "kept", ["d2"], None),
    ]


def test_every_edit_keeps_the_lineage():
    drafts = ["d0", "d1", "d2", "d3", "d4", "d5"]
    work = make_given_topic(condition="auto_edit", drafts=drafts)
    n0, n1, n2, n3, n4, n5 = ids_of(work)
    apply(work, "edit", nugget=n1, text="d1 in better words")
    merged = apply(work, "merge", nuggets=f"{n2},{n3}", text="d2 and d3 together").focus_id
    apply(work, "split", nugget=n4, texts="first half of d4\nsecond half of d4")
    apply(work, "delete", nugget=n5)
    apply(work, "add", text="a fact no draft had")
    rows = [(text, origin, derived) for _, _, text, _, origin, derived, _ in state_of(work)]
    assert rows == [
        ("d0", "kept", ["d0"]),
        ("d1 in better words", "reworded", ["d1"]),
        ("d2 and d3 together", "merged", ["d2", "d3"]),
        ("first half of d4", "split", ["d4"]),
        ("second half of d4", "split", ["d4"]),
        ("a fact no draft had", "added", []),
    ]
    assert Nugget.objects.get(pk=merged).position == 2
    # Rewording back to the draft's own words makes it a kept draft again.
    apply(work, "edit", nugget=n1, text="d1")
    assert Nugget.objects.get(pk=n1).origin == "kept"


def test_the_lineage_summary_counts_what_became_of_each_draft():
    # By hand: drafts d0..d5; d0 kept, d1 reworded, d2+d3 merged, d4 split, d5 deleted, one added.
    summary = rules.lineage_summarize(
        draft_ids=[10, 11, 12, 13, 14, 15],
        finals=[(0, "kept", [10]), (1, "reworded", [11]), (2, "merged", [12, 13]), (3, "split", [14]), (4, "split", [14]), (5, "added", [])],
    )
    assert (summary.kept, summary.reworded, summary.merged, summary.split, summary.deleted, summary.added) == (1, 1, 2, 1, 1, 1)
    assert summary.final == 6 and summary.drafts == 6
    assert summary.descendants[14] == [3, 4] and summary.descendants[15] == []
    assert summary.final_by_origin == {"kept": 1, "reworded": 1, "merged": 1, "split": 2, "added": 1}


def test_merging_keeps_vital_if_any_part_was_vital():
    work = make_given_topic(condition="auto_edit", drafts=["a", "b", "c"])
    a, b, c = ids_of(work)
    apply(work, "importance", nugget=b, importance="vital")
    merged = apply(work, "merge", nuggets=[a, b, c]).focus_id
    nugget = Nugget.objects.get(pk=merged)
    assert (nugget.text, nugget.importance) == ("a; b; c", "vital")


def test_a_merge_needs_two_nuggets_and_a_split_two_parts():
    work = make_given_topic(condition="auto_edit", drafts=["a", "b"])
    a, _ = ids_of(work)
    with pytest.raises(rules.InvalidOperation, match="at least two nuggets"):
        apply(work, "merge", nuggets=f"{a},{a}")
    with pytest.raises(rules.InvalidOperation, match="at least two parts"):
        apply(work, "split", nugget=a, texts="only one\n\n")


# --- Version check, retries, edit log ---------------------------------------


def test_a_stale_tab_gets_a_conflict_and_changes_nothing():
    work = make_given_topic(condition="manual")
    apply(work, "add", text="first")
    stale_version = nugget_set_of(work).version
    apply(work, "add", text="written in the other tab")
    with pytest.raises(rules.VersionConflict) as conflict:
        nugget_operation_apply(
            work_id=work.pk, user=work.assessor, operation="add", params={"text": "stale"}, expected_version=stale_version
        )
    assert conflict.value.current == stale_version + 1
    assert "changed elsewhere" in conflict.value.message
    assert texts_of(work) == ["first", "written in the other tab"]


def test_a_retried_operation_is_applied_once():
    work = make_given_topic(condition="manual")
    version = nugget_set_of(work).version
    for _ in range(2):
        result = nugget_operation_apply(
            work_id=work.pk, user=work.assessor, operation="add", params={"text": "once"}, expected_version=version, op_id="op-1"
        )
    assert result.replayed
    assert texts_of(work) == ["once"]
    # One edit, recorded where every save of an assessor's page is (the judging core's operations).
    edit = NuggetEdit.objects.get(nugget_set=nugget_set_of(work), operation="add")
    operation = WorkOperation.objects.get(work=work, op_id="op-1")
    assert operation.answer["edit"] == edit.pk
    assert operation.answer["request"][:3] == ["nuggets", "add", version]


def test_an_operation_id_reused_for_another_change_is_refused():
    work = make_given_topic(condition="manual")
    version = nugget_set_of(work).version
    nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation="add", params={"text": "a"}, expected_version=version, op_id="op-2"
    )
    with pytest.raises(rules.InvalidOperation, match="already used for another change"):
        nugget_operation_apply(
            work_id=work.pk, user=work.assessor, operation="add", params={"text": "b"}, expected_version=version + 1,
            op_id="op-2",
        )
    assert texts_of(work) == ["a"]


def test_an_operation_id_reused_on_the_same_version_with_another_text_is_refused():
    """Not a replay: the same id, the same operation and version, another text (it was answered as applied)."""
    work = make_given_topic(condition="manual")
    version = nugget_set_of(work).version
    nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation="add", params={"text": "first"}, expected_version=version,
        op_id="op-4",
    )
    with pytest.raises(rules.InvalidOperation, match="already used for another change"):
        nugget_operation_apply(
            work_id=work.pk, user=work.assessor, operation="add", params={"text": "second"}, expected_version=version,
            op_id="op-4",
        )
    assert texts_of(work) == ["first"]


def test_a_label_save_and_a_nugget_edit_share_the_record_of_operations():
    """The same id on one work is one operation, whichever page sent it: the judging core refuses the second."""
    from assessor.work.judging import JudgeError, operation_replayed

    work = make_given_topic(condition="manual")
    version = nugget_set_of(work).version
    nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation="add", params={"text": "a"}, expected_version=version, op_id="op-3"
    )
    with pytest.raises(JudgeError):
        operation_replayed(work=work, op_id="op-3", request=["7", "support"])


def test_the_edit_log_has_who_when_before_and_after():
    work = make_given_topic(condition="manual")
    nugget = apply(work, "add", text="before text").focus_id
    apply(work, "edit", nugget=nugget, text="after text")
    edit = NuggetEdit.objects.filter(operation="edit").get()
    assert edit.user == work.assessor and edit.at is not None
    assert edit.before["nuggets"][0]["text"] == "before text"
    assert edit.after["nuggets"][0]["text"] == "after text"
    assert edit.set_version == 2
    assert list(NuggetEdit.objects.values_list("operation", flat=True)) == ["add", "edit"]


def test_another_assessor_cannot_edit_the_topic():
    work = make_given_topic(condition="manual")
    other = make_user(Role.ASSESSOR)
    with pytest.raises(rules.InvalidOperation, match="not given to you"):
        nugget_operation_apply(work_id=work.pk, user=other, operation="add", params={"text": "x"}, expected_version=None)


# --- Undo -------------------------------------------------------------------


def test_undo_takes_back_every_kind_of_edit_in_order():
    work = make_given_topic(condition="auto_edit", drafts=["d0", "d1", "d2", "d3"])
    segment = Qrel.objects.filter(topic_id=work.topic_id, grade__gte=1).values_list("segment_id", flat=True).first()
    n0, n1, n2, n3 = ids_of(work)
    states = [state_of(work)]
    steps = [
        ("edit", {"nugget": n0, "text": "d0 reworded"}),
        ("importance", {"nugget": n1, "importance": "vital"}),
        ("source", {"nugget": n1, "segment": segment}),
        ("merge", {"nuggets": [n1, n2]}),
        ("split", {"nugget": n3, "texts": ["x", "y"]}),
        ("move", {"nugget": n0, "to": 3}),
        ("delete", {"nugget": n0}),
        ("add", {"text": "new"}),
    ]
    for operation, params in steps:
        apply(work, operation, **params)
        states.append(state_of(work))
    for expected in reversed(states[:-1]):
        apply(work, "undo")
        assert state_of(work) == expected
    with pytest.raises(rules.InvalidOperation, match="Nothing to undo"):
        apply(work, "undo")
    assert NuggetEdit.objects.filter(operation="undo").count() == len(steps)


def test_undo_after_new_edits_skips_what_was_already_undone():
    work = make_given_topic(condition="manual")
    apply(work, "add", text="a")
    apply(work, "add", text="b")
    apply(work, "undo")
    apply(work, "add", text="c")
    apply(work, "undo")
    assert texts_of(work) == ["a"]
    apply(work, "undo")
    assert texts_of(work) == []


def test_a_stale_undo_is_a_conflict_too():
    work = make_given_topic(condition="manual")
    apply(work, "add", text="a")
    with pytest.raises(rules.VersionConflict):
        nugget_undo(work_id=work.pk, user=work.assessor, expected_version=0)
    assert texts_of(work) == ["a"]


# --- Submit and reopen ------------------------------------------------------


def test_submit_needs_an_importance_on_every_nugget():
    work = make_given_topic(condition="auto_edit", drafts=["a", "b", "c"])
    a, b, c = ids_of(work)
    apply(work, "importance", nugget=b, importance="okay")
    with pytest.raises(rules.InvalidOperation, match="missing on nugget 1, 3"):
        nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    assert nugget_set_of(work).status == NuggetSet.Status.OPEN


def test_a_submitted_list_is_frozen_until_an_organizer_reopens_it():
    work = make_given_topic(condition="manual")
    organizer = make_user(Role.ORGANIZER)
    apply(work, "add", text="a", importance="vital")
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED and work.submitted_at is not None
    assert nugget_set_of(work).status == NuggetSet.Status.SUBMITTED
    with pytest.raises(rules.SetFrozen, match="frozen"):
        apply(work, "add", text="too late")
    with pytest.raises(rules.SetFrozen):
        apply(work, "undo")
    nugget_set_reopen(work_id=work.pk, by=organizer, reason="nugget 1 is two facts")
    work.refresh_from_db()
    assert (work.status, work.reopened_count) == (AssessorWork.Status.IN_PROGRESS, 1)
    assert list(WorkEvent.objects.filter(work=work).values_list("action", flat=True)) == ["given", "submitted", "reopened"]
    reopened = WorkEvent.objects.get(work=work, action="reopened")
    assert reopened.user == organizer and reopened.detail["reason"] == "nugget 1 is two facts"
    assert NuggetEdit.objects.filter(operation="reopen", user=organizer).exists()
    apply(work, "add", text="after reopening", importance="okay")
    assert texts_of(work) == ["a", "after reopening"]


def test_submit_and_reopen_are_not_undone():
    work = make_given_topic(condition="manual")
    organizer = make_user(Role.ORGANIZER)
    apply(work, "add", text="a", importance="vital")
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    nugget_set_reopen(work_id=work.pk, by=organizer)
    apply(work, "undo")
    assert texts_of(work) == []
    assert nugget_set_of(work).status == NuggetSet.Status.OPEN


# --- A fixed number of queries ----------------------------------------------


def queries_of_operations(size: int) -> list[int]:
    work = make_given_topic(condition="auto_edit", drafts=[f"draft {i}" for i in range(size)])
    ids = ids_of(work)
    counts = []
    for operation, params in [
        ("edit", {"nugget": ids[0], "text": "changed"}),
        ("importance", {"nugget": ids[1], "importance": "vital"}),
        ("move", {"nugget": ids[0], "to": size - 1}),
        ("merge", {"nuggets": [ids[2], ids[3]]}),
        ("split", {"nugget": ids[4], "texts": "p\nq"}),
        ("delete", {"nugget": ids[5]}),
        ("add", {"text": "new"}),
        ("undo", {}),
    ]:
        version = nugget_set_of(work).version
        with CaptureQueriesContext(connection) as queries:
            nugget_operation_apply(
                work_id=work.pk, user=work.assessor, operation=operation, params=params, expected_version=version
            )
        counts.append(len(queries))
    return counts


def test_an_operation_costs_as_many_queries_on_a_short_list_as_on_a_long_one():
    assert queries_of_operations(8) == queries_of_operations(30)


def test_a_post_edited_list_is_submitted_with_at_most_twenty_nuggets():
    work = make_given_topic(condition="auto_edit", drafts=[f"d{i}" for i in range(22)])
    for nugget_id in ids_of(work):
        apply(work, "importance", nugget=nugget_id, importance="okay")
    with pytest.raises(rules.InvalidOperation, match="At most 20 nuggets may be submitted; the list has 22"):
        nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    first, second, third = ids_of(work)[:3]
    apply(work, "merge", nuggets=[first, second, third])
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    assert nugget_set_of(work).status == NuggetSet.Status.SUBMITTED


def test_a_retried_submit_is_not_refused_as_frozen():
    work = make_given_topic(condition="manual")
    apply(work, "add", text="a", importance="vital")
    version = nugget_set_of(work).version
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=version, op_id="submit-1")
    again = nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=version, op_id="submit-1")
    assert again.replayed
    assert list(WorkEvent.objects.filter(work=work).values_list("action", flat=True)) == ["given", "submitted"]
