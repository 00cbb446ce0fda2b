import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from assessor.models import ImportBatch
from assignment.importing import assignments_import
from assignment.models import AssignmentLabel, RetiredAssignmentLabel
from nuggets.importing import nuggets_import
from nuggets.models import Nugget, NuggetSet
from tests.builders import FIXTURES, make_topic

pytestmark = pytest.mark.django_db

SLICE = FIXTURES / "judgments"


def table_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in (NuggetSet, Nugget, AssignmentLabel, ImportBatch)}


def topic_line(qid: str, nuggets: list[tuple[str, str | None]]) -> str:
    return json.dumps(
        {
            "qid": qid,
            "query": "a query",
            "nuggets": [{"text": t} if i is None else {"text": t, "importance": i} for t, i in nuggets],
        }
    )


LIST_1 = [("Sky is blue", "vital"), ("Rayleigh scattering", "okay")]
LIST_2 = [("Cats purr", "vital")]


@pytest.fixture
def topics():
    return [make_topic("2024-1", "why is the sky blue"), make_topic("2024-2", "why do cats purr")]


def small_file(write_file, name: str = "nuggets.jsonl", lists: dict | None = None) -> Path:
    lists = lists or {"2024-1": LIST_1, "2024-2": LIST_2}
    return write_file(name, "\r\n".join(topic_line(qid, nuggets) for qid, nuggets in lists.items()) + "\r\n")


def stored_lists(name: str) -> dict[str, list[tuple[str, str]]]:
    return {
        nugget_set.topic_id: [(n.text, n.importance) for n in nugget_set.nuggets.order_by("position")]
        for nugget_set in NuggetSet.objects.filter(name=name)
    }


def test_it_imports_one_nugget_set_a_topic(write_file, topics):
    call_command("import_nuggets", str(small_file(write_file)), "--kind", "manual")
    assert stored_lists("manual") == {"2024-1": LIST_1, "2024-2": LIST_2}
    batch = ImportBatch.objects.get()
    assert set(NuggetSet.objects.values_list("kind", "imported_from")) == {("manual", batch.pk)}
    assert set(Nugget.objects.values_list("imported_from", flat=True)) == {batch.pk}


def test_a_name_distinguishes_two_sets_of_one_kind(write_file, topics):
    nuggets_import(path=small_file(write_file), kind="auto", name="auto-gpt4o")
    nuggets_import(path=small_file(write_file, "b.jsonl", {"2024-1": [("Other", "okay")]}), kind="auto", name="auto-llama")
    assert stored_lists("auto-gpt4o")["2024-1"] == LIST_1
    assert stored_lists("auto-llama") == {"2024-1": [("Other", "okay")]}


def test_drafts_carry_no_importance(write_file, topics):
    path = small_file(write_file, "drafts.jsonl", {"2024-1": [("Draft one", None), ("Draft two", "vital")]})
    call_command("import_nuggets", str(path), "--drafts")
    nugget_set = NuggetSet.objects.get()
    assert (nugget_set.kind, nugget_set.name) == ("draft", "draft")
    assert stored_lists("draft") == {"2024-1": [("Draft one", ""), ("Draft two", "")]}


def test_at_most_thirty_drafts(write_file, topics):
    path = small_file(write_file, "drafts.jsonl", {"2024-1": [(f"Draft {n}", None) for n in range(31)]})
    with pytest.raises(CommandError, match=r"line 1, field 'nuggets': 31 drafts, at most 30"):
        call_command("import_nuggets", str(path), "--drafts")
    assert table_counts() == {"NuggetSet": 0, "Nugget": 0, "AssignmentLabel": 0, "ImportBatch": 0}


def test_kind_or_drafts_is_required(write_file, topics):
    with pytest.raises(CommandError, match="give either --kind KIND or --drafts"):
        call_command("import_nuggets", str(small_file(write_file)))
    with pytest.raises(CommandError, match="give either --kind KIND or --drafts"):
        call_command("import_nuggets", str(small_file(write_file)), "--drafts", "--kind", "auto")


def test_importing_the_same_file_twice_adds_nothing(write_file, topics):
    path = small_file(write_file)
    nuggets_import(path=path, kind="manual")
    before = table_counts()
    result = nuggets_import(path=path, kind="manual")
    assert table_counts() == before
    assert (result.created, result.unchanged, result.replaced) == (0, 2, 0)


def test_it_reads_back_what_export_nuggets_writes(write_file, topics, tmp_path):
    nuggets_import(path=small_file(write_file), kind="auto_edit")
    nuggets_import(path=small_file(write_file, "d.jsonl", {"2024-2": [("Draft", None)]}), kind="draft")
    for name, kind in [("auto_edit", "auto_edit"), ("draft", "draft")]:
        exported = tmp_path / f"{name}.jsonl"
        call_command("export_nuggets", "--nuggets", name, "--output", str(exported))
        nuggets_import(path=exported, kind=kind, name=f"{name}-copy")
        assert stored_lists(f"{name}-copy") == stored_lists(name)


def test_the_real_slice_lists_import_in_file_order(write_file):
    call_command("import_topics", str(SLICE / "topics.slice.tsv"))
    first_lists: dict[str, list[dict]] = {}
    for line in (SLICE / "nugget_assignment.slice.jl").read_text().splitlines():
        record = json.loads(line)
        first_lists.setdefault(record["qid"], record["nuggets"])
    path = write_file(
        "nist_nuggets.jsonl",
        "".join(
            json.dumps({"qid": qid, "query": "q", "nuggets": [{"text": n["text"], "importance": n["importance"]} for n in nuggets]})
            + "\n"
            for qid, nuggets in first_lists.items()
        ),
    )
    nuggets_import(path=path, kind="auto_edit")
    assert stored_lists("auto_edit") == {
        qid: [(n["text"], n["importance"]) for n in nuggets] for qid, nuggets in first_lists.items()
    }
    # The assignment file's nugget sets are the same sets: its labels go on these nuggets.
    assignments_import(path=SLICE / "nugget_assignment.slice.jl", nuggets="auto_edit", assigner="manual")
    assert NuggetSet.objects.count() == len(first_lists)


# --- Bad input: a clear error, and nothing changes ---------------------------------


def assert_fails_and_changes_nothing(path: Path, match: str, *args: str) -> None:
    before = table_counts()
    with pytest.raises(CommandError, match=match):
        call_command("import_nuggets", str(path), *(args or ("--kind", "manual")))
    assert table_counts() == before


def test_a_truncated_json_line_changes_nothing(write_file, topics):
    good = small_file(write_file).read_text().splitlines()
    assert_fails_and_changes_nothing(write_file("cut.jsonl", good[0] + "\n" + good[1][:20] + "\n"), r"cut.jsonl, line 2: not valid JSON")


def test_an_unknown_topic_is_an_error(write_file, topics):
    path = small_file(write_file, "n.jsonl", {"2024-1": LIST_1, "2024-77": LIST_2})
    assert_fails_and_changes_nothing(path, r"n.jsonl, line 2, field 'qid': unknown topic 2024-77")


def test_an_importance_outside_the_vocabulary_names_its_field(write_file, topics):
    path = small_file(write_file, "n.jsonl", {"2024-1": [("Sky is blue", "vital"), ("Scattering", "high")]})
    assert_fails_and_changes_nothing(path, r"line 1, field 'nuggets\[1\].importance': 'high' is not an importance")


def test_a_missing_importance_is_an_error_unless_drafts(write_file, topics):
    path = small_file(write_file, "n.jsonl", {"2024-1": [("Sky is blue", None)]})
    assert_fails_and_changes_nothing(path, r"field 'nuggets\[0\].importance': None is not an importance")


def test_a_topic_twice_in_a_file_is_an_error(write_file, topics):
    text = small_file(write_file).read_text() + topic_line("2024-1", LIST_2) + "\n"
    assert_fails_and_changes_nothing(write_file("twice.jsonl", text), r"line 3, field 'qid': topic 2024-1 repeated \(first on line 1\)")


def test_a_stored_set_with_another_list_is_an_error_unless_replace(write_file, topics):
    nuggets_import(path=small_file(write_file), kind="manual")
    # An assessor's label on the old list, which replacing the list deletes.
    assignments_import(
        path=write_file(
            "a.jsonl",
            json.dumps(
                {
                    "qid": "2024-2",
                    "run_id": "runA",
                    "answer_text": "Cats purr.",
                    "nuggets": [{"text": "Cats purr", "importance": "vital", "assignment": "support"}],
                }
            )
            + "\n",
        ),
        nuggets="manual",
        assigner="manual",
    )
    changed = small_file(write_file, "changed.jsonl", {"2024-1": LIST_1, "2024-2": [("Cats purr", "okay")]})
    assert_fails_and_changes_nothing(changed, r"changed.jsonl, line 2, field 'nuggets\[0\].importance'")

    # A label hangs on the old list: replacing it must be confirmed, and the refusal names the label's source.
    assert_fails_and_changes_nothing(
        changed, r"changed.jsonl, line 2, field 'nuggets'.*1 of assigner 'manual' \(imported files\).*--retire-labels",
        "--kind", "manual", "--replace",
    )  # fmt: skip
    result = nuggets_import(path=changed, kind="manual", replace=True, retire_labels=True)
    assert (result.unchanged, result.replaced) == (1, 1)
    assert stored_lists("manual")["2024-2"] == [("Cats purr", "okay")]
    assert AssignmentLabel.objects.count() == 0
    assert list(RetiredAssignmentLabel.objects.values_list("nugget_text", "label", "reason")) == [
        ("Cats purr", "support", "replaced")
    ]
    assert "retired 1 labels" in result.warnings[0]


def test_a_stored_set_of_another_kind_is_an_error(write_file, topics):
    nuggets_import(path=small_file(write_file), kind="auto", name="mine")
    assert_fails_and_changes_nothing(small_file(write_file, "b.jsonl"), r"is stored as auto nuggets, not manual",
                                     "--kind", "manual", "--name", "mine")
