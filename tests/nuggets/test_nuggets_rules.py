"""The pure rules of the workspace, against hand-made cases."""

import pytest

from assessor.work.timing import duration_label
from nuggets import workspace as rules


def test_text_is_one_line_with_collapsed_spaces():
    assert rules.text_clean("  two\n words\t here ") == "two words here"
    with pytest.raises(rules.InvalidOperation, match="needs some text"):
        rules.text_clean(" \n ")
    with pytest.raises(rules.InvalidOperation, match="at most 1000 characters"):
        rules.text_clean("x" * 1001)


def test_a_split_is_one_part_per_line():
    assert rules.split_texts("first part\n\n  second  part \n") == ["first part", "second part"]
    assert rules.split_texts(["a", "b", " "]) == ["a", "b"]
    with pytest.raises(rules.InvalidOperation):
        rules.split_texts("only one")


def test_rewording_changes_the_origin_of_kept_drafts_only():
    assert rules.origin_after_reword(origin="kept", new_text="new words", draft_texts=["old words"]) == "reworded"
    assert rules.origin_after_reword(origin="reworded", new_text="old words", draft_texts=["old  words"]) == "kept"
    assert rules.origin_after_reword(origin="merged", new_text="x", draft_texts=["a", "b"]) == "merged"
    assert rules.origin_after_reword(origin="added", new_text="x", draft_texts=[]) == "added"
    assert rules.origin_after_reword(origin="", new_text="x", draft_texts=[]) == ""


def test_submit_problems_name_the_nuggets():
    assert rules.submit_problems(nuggets=[(0, "a", "vital"), (1, "b", "okay")], cap=20) == []
    assert rules.submit_problems(nuggets=[], cap=20) == ["The list is empty: write at least one nugget."]
    problems = rules.submit_problems(nuggets=[(0, "a", ""), (1, "b", "okay"), (2, "c", "")], cap=2)
    assert problems == [
        "Give every nugget an importance (vital or okay); missing on nugget 1, 3.",
        "At most 2 nuggets may be submitted; the list has 3.",
    ]


def test_moving_a_nugget_clamps_to_the_list():
    assert rules.moved_order([1, 2, 3, 4], nugget_id=1, to_index=2) == [2, 3, 1, 4]
    assert rules.moved_order([1, 2, 3, 4], nugget_id=4, to_index=-5) == [4, 1, 2, 3]
    assert rules.moved_order([1, 2, 3, 4], nugget_id=2, to_index=99) == [1, 3, 4, 2]
    with pytest.raises(rules.InvalidOperation):
        rules.moved_order([1, 2], nugget_id=7, to_index=0)


def test_the_cap_message_is_clear():
    rules.cap_check(count_after=20, cap=20, kind_label="ManualNuggets")
    with pytest.raises(rules.CapReached, match="ManualNuggets allows at most 20 nuggets"):
        rules.cap_check(count_after=21, cap=20, kind_label="ManualNuggets")


def test_a_merge_keeps_the_strongest_importance():
    assert rules.importance_of_merge(["okay", "vital", ""]) == "vital"
    assert rules.importance_of_merge(["okay", ""]) == "okay"
    assert rules.importance_of_merge(["", ""]) == ""


def test_durations_read_like_a_clock():
    assert duration_label(0) == "0 s"
    assert duration_label(None) == "0 s"
    assert duration_label(59.6) == "1 min 00 s"
    assert duration_label(754) == "12 min 34 s"
    assert duration_label(9000) == "2 h 30 min"


def test_average_time_per_condition():
    rows = [("manual", 9000.0), ("auto_edit", 3000.0), ("manual", 8000.0), ("auto_edit", 4200.0)]
    assert rules.condition_average_seconds(rows) == {"auto_edit": (2, 3600.0), "manual": (2, 8500.0)}
