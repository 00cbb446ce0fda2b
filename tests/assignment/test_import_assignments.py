import json
import os
import random
import time
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from assessor.importing.base import ImportFailure
from assessor.models import Answer, ImportBatch, Run, Sentence
from assignment.importing import assignments_import
from assignment.models import AssignmentLabel, RetiredAssignmentLabel
from nuggets.models import Nugget, NuggetSet
from tests.builders import FIXTURES, make_answer, make_run, make_topic

pytestmark = pytest.mark.django_db

SLICE = FIXTURES / "judgments"


def table_counts() -> dict[str, int]:
    models = (Run, Answer, Sentence, NuggetSet, Nugget, AssignmentLabel, ImportBatch)
    return {model.__name__: model.objects.count() for model in models}


def assigned_line(qid: str, run_id: str, answer_text: str, nuggets: list[tuple[str, str, str]]) -> str:
    return json.dumps(
        {
            "query": "normalized query text",
            "qid": qid,
            "run_id": run_id,
            "answer_text": answer_text,
            "response_length": len(answer_text.split()),
            "nuggets": [{"text": t, "importance": i, "assignment": a} for t, i, a in nuggets],
        }
    )


NUGGETS_1 = [("Sky is blue", "vital"), ("Rayleigh scattering", "vital"), ("Sunsets are red", "okay")]
NUGGETS_2 = [("Cats purr", "vital"), ("Purring heals", "okay")]


def small_file(write_file, name: str = "assigned.jsonl", changes: dict | None = None, *, crlf: bool = False) -> Path:
    labels = {
        ("2024-1", "runA"): ["support", "partial_support", "not_support"],
        ("2024-1", "runB"): ["not_support", "not_support", "support"],
        ("2024-2", "runA"): ["support", "support"],
    }
    labels.update(changes or {})
    lines = []
    for (qid, run_id), run_labels in labels.items():
        nuggets = NUGGETS_1 if qid == "2024-1" else NUGGETS_2
        lines.append(
            assigned_line(
                qid,
                run_id,
                f"Answer of {run_id} on {qid}.  Second   sentence.",
                [(t, i, a) for (t, i), a in zip(nuggets, run_labels, strict=False)],
            )
        )
    newline = "\r\n" if crlf else "\n"
    return write_file(name, newline.join(lines) + newline)


@pytest.fixture
def topics():
    return [make_topic("2024-1", "why is the sky blue"), make_topic("2024-2", "why do cats purr")]


def labels_of(assigner: str = "manual") -> dict[tuple[str, str, int], str]:
    return {
        (label.answer.run.run_id, label.answer.topic_id, label.nugget.position): label.label
        for label in AssignmentLabel.objects.filter(assigner=assigner).select_related("answer__run", "nugget")
    }


def test_it_imports_nugget_sets_answers_and_labels(write_file, topics):
    result = assignments_import(path=small_file(write_file, crlf=True), nuggets="auto_edit", assigner="manual")

    assert result.lines == 3
    sets = NuggetSet.objects.order_by("topic_id")
    assert [(s.topic_id, s.kind, s.name) for s in sets] == [
        ("2024-1", "auto_edit", "auto_edit"),
        ("2024-2", "auto_edit", "auto_edit"),
    ]
    assert [(n.position, n.text, n.importance) for n in sets[0].nuggets.order_by("position")] == [
        (0, "Sky is blue", "vital"),
        (1, "Rayleigh scattering", "vital"),
        (2, "Sunsets are red", "okay"),
    ]
    assert set(Run.objects.values_list("run_id", flat=True)) == {"runA", "runB"}
    answer = Answer.objects.get(run__run_id="runB", topic_id="2024-1")
    assert answer.text == "Answer of runB on 2024-1.  Second   sentence."
    assert answer.words == 7
    assert not answer.sentences.exists()
    assert labels_of() == {
        ("runA", "2024-1", 0): "support",
        ("runA", "2024-1", 1): "partial_support",
        ("runA", "2024-1", 2): "not_support",
        ("runB", "2024-1", 0): "not_support",
        ("runB", "2024-1", 1): "not_support",
        ("runB", "2024-1", 2): "support",
        ("runA", "2024-2", 0): "support",
        ("runA", "2024-2", 1): "support",
    }
    batch = ImportBatch.objects.get()
    assert batch.kind == "assignments"
    assert set(AssignmentLabel.objects.values_list("assigner_kind", "imported_from")) == {("manual", batch.pk)}
    assert set(NuggetSet.objects.values_list("imported_from", flat=True)) == {batch.pk}
    assert set(Answer.objects.values_list("imported_from", flat=True)) == {batch.pk}


def test_names_default_to_the_kinds_and_can_be_given(write_file, topics):
    path = small_file(write_file)
    call_command("import_assignments", str(path), "--nuggets", "auto", "--assigner", "auto", "--nuggets-name",
                 "auto-gpt4o", "--assigner-name", "gpt4o")
    assert set(NuggetSet.objects.values_list("name", "kind")) == {("auto-gpt4o", "auto")}
    assert set(AssignmentLabel.objects.values_list("assigner", "assigner_kind")) == {("gpt4o", "auto")}


def test_a_second_assigner_labels_the_same_nugget_sets(write_file, topics):
    assignments_import(path=small_file(write_file), nuggets="auto_edit", assigner="manual")
    auto = small_file(write_file, "auto.jsonl", {("2024-1", "runA"): ["support", "support", "support"]})
    assignments_import(path=auto, nuggets="auto_edit", assigner="auto")
    assert NuggetSet.objects.count() == 2
    assert Answer.objects.count() == 3
    assert labels_of("auto")[("runA", "2024-1", 1)] == "support"
    assert labels_of("manual")[("runA", "2024-1", 1)] == "partial_support"


def test_importing_the_same_file_twice_adds_nothing(write_file, topics):
    path = small_file(write_file)
    assignments_import(path=path, nuggets="auto_edit", assigner="manual")
    before = table_counts()
    result = assignments_import(path=path, nuggets="auto_edit", assigner="manual")
    assert table_counts() == before
    assert (result.created, result.unchanged, result.replaced) == (0, 8, 0)


def test_a_nuggetizer_output_with_numeric_qids_imports(write_file):
    make_topic("1030303", "who is aziz hashim")
    line = {
        "query": "who is aziz hashim",
        "qid": 1030303,
        "answer_text": "Aziz Hashim is a restaurateur.",
        "response_length": 5,
        "run_id": "ragnarok",
        "nuggets": [{"text": "Aziz Hashim is a restaurateur", "importance": "vital", "assignment": "support"}],
    }
    assignments_import(path=write_file("final_assignments.jsonl", json.dumps(line) + "\n"), nuggets="auto",
                       assigner="auto")
    assert AssignmentLabel.objects.get().answer.topic_id == "1030303"


def test_run_ids_match_stored_runs_by_team_prefix(write_file, topics):
    stored = make_run("coordinators.runA")
    assignments_import(path=small_file(write_file), nuggets="auto_edit", assigner="manual")
    assert set(Run.objects.values_list("run_id", flat=True)) == {"coordinators.runA", "runB"}
    assert Answer.objects.filter(run=stored).count() == 2


def test_labels_go_on_an_answer_stored_from_a_run_file(write_file, topics):
    answer = make_answer(make_run("runA"), topics[0], [("Answer of runA on 2024-1.", []), ("Second sentence.", [])])
    result = assignments_import(path=small_file(write_file), nuggets="auto_edit", assigner="manual")
    assert AssignmentLabel.objects.filter(answer=answer).count() == 3
    assert answer.sentences.count() == 2
    assert result.warnings == []


def test_a_differing_answer_text_is_a_warning_and_the_stored_text_stays(write_file, topics):
    answer = make_answer(make_run("runA"), topics[0], [("Something else entirely.", [])])
    result = assignments_import(path=small_file(write_file), nuggets="auto_edit", assigner="manual")
    answer.refresh_from_db()
    assert answer.text == "Something else entirely."
    assert AssignmentLabel.objects.filter(answer=answer).count() == 3
    assert len(result.warnings) == 1
    assert "line 1" in result.warnings[0] and "answer_text differs" in result.warnings[0]


# --- Bad input: a clear error, and nothing changes ---------------------------------


def assert_fails_and_changes_nothing(path: Path, match: str, *args: str) -> None:
    before = table_counts()
    with pytest.raises(CommandError, match=match):
        call_command("import_assignments", str(path), "--nuggets", "auto_edit", "--assigner", "manual", *args)
    assert table_counts() == before


def test_a_truncated_json_line_changes_nothing(write_file, topics):
    good = small_file(write_file).read_text().splitlines()
    path = write_file("cut.jsonl", good[0] + "\n" + good[1] + "\n" + good[2][: len(good[2]) // 2] + "\n")
    assert_fails_and_changes_nothing(path, r"cut.jsonl, line 3: not valid JSON")


def test_an_unknown_topic_is_an_error(write_file, topics):
    path = small_file(write_file, "assigned.jsonl", {("2024-999", "runA"): ["support", "support"]})
    assert_fails_and_changes_nothing(path, r"line 4, field 'qid': unknown topic 2024-999")


def test_a_label_outside_the_vocabulary_names_its_field(write_file, topics):
    path = small_file(write_file, "assigned.jsonl", {("2024-1", "runB"): ["support", "support", "supported"]})
    assert_fails_and_changes_nothing(path, r"line 2, field 'nuggets\[2\].assignment': 'supported' is not a label")


def test_an_importance_outside_the_vocabulary_names_its_field(write_file, topics):
    line = assigned_line("2024-1", "runA", "text", [("Sky is blue", "important", "support")])
    assert_fails_and_changes_nothing(write_file("a.jsonl", line + "\n"), r"field 'nuggets\[0\].importance'")


def test_a_second_answer_of_a_run_for_a_topic_is_an_error(write_file, topics):
    good = small_file(write_file).read_text()
    assert_fails_and_changes_nothing(
        write_file("dup.jsonl", good + good.splitlines()[1] + "\n"), r"line 4, field 'run_id': a second answer of run runB"
    )


def test_two_spellings_of_one_run_for_a_topic_are_a_duplicate(write_file, topics):
    good = small_file(write_file).read_text()
    prefixed = good.splitlines()[0].replace('"runA"', '"team.runA"')
    assert_fails_and_changes_nothing(write_file("dup.jsonl", good + prefixed + "\n"), r"line 4, field 'run_id'")


def test_two_nugget_lists_for_one_topic_are_an_error(write_file, topics):
    lines = small_file(write_file).read_text().splitlines()
    lines[1] = lines[1].replace("Rayleigh scattering", "Mie scattering")
    assert_fails_and_changes_nothing(
        write_file("lists.jsonl", "\n".join(lines) + "\n"),
        r"line 2, field 'nuggets\[1\].text': the nuggets of topic 2024-1 differ from those on line 1",
    )


def test_an_ambiguous_run_id_is_an_error(write_file, topics):
    make_run("team1.runA")
    make_run("team2.runA")
    assert_fails_and_changes_nothing(small_file(write_file), r"line 1, field 'run_id'.*matches several stored runs")


def test_a_contradicting_label_is_an_error_unless_replace(write_file, topics):
    assignments_import(path=small_file(write_file), nuggets="auto_edit", assigner="manual")
    changed = small_file(write_file, "changed.jsonl", {("2024-2", "runA"): ["support", "not_support"]})
    assert_fails_and_changes_nothing(changed, r"changed.jsonl, line 3, field 'nuggets\[1\].assignment'")

    result = assignments_import(path=changed, nuggets="auto_edit", assigner="manual", replace=True)
    assert (result.created, result.unchanged, result.replaced) == (0, 7, 1)
    label = AssignmentLabel.objects.get(answer__topic_id="2024-2", nugget__position=1)
    assert label.label == "not_support"
    assert label.imported_from == result.batch


def test_a_stored_nugget_set_with_another_list_is_an_error_unless_replace(write_file, topics):
    assignments_import(path=small_file(write_file), nuggets="auto_edit", assigner="manual")
    other = assigned_line("2024-2", "runC", "x", [("Cats purr loudly", "vital", "support")])
    path = write_file("other.jsonl", other + "\n")
    assert_fails_and_changes_nothing(path, r"line 1, field 'nuggets\[0\].text': the nugget set 'auto_edit' of topic 2024-2")

    old_labels = AssignmentLabel.objects.filter(answer__topic_id="2024-2").count()
    assert old_labels > 0
    # Labels hang on the old list: replacing it must be confirmed, and the refusal says what depends on it.
    with pytest.raises(ImportFailure, match=rf"has labels on its nuggets \({old_labels} of assigner 'manual'.*--retire-labels"):
        assignments_import(path=path, nuggets="auto_edit", assigner="manual", replace=True)
    version = NuggetSet.objects.get(topic_id="2024-2").version
    assignments_import(path=path, nuggets="auto_edit", assigner="manual", replace=True, retire_labels=True)
    nugget_set = NuggetSet.objects.get(topic_id="2024-2")
    assert [(n.text, n.importance) for n in nugget_set.nuggets.all()] == [("Cats purr loudly", "vital")]
    assert nugget_set.version == version + 1  # open tabs are told the list changed
    # The old labels are retired (kept, not scored); only the new answer's label is on the new nugget.
    assert AssignmentLabel.objects.filter(answer__topic_id="2024-2").count() == 1
    retired = RetiredAssignmentLabel.objects.filter(answer__topic_id="2024-2")
    assert retired.count() == old_labels and set(retired.values_list("reason", flat=True)) == {"replaced"}


def test_an_assigner_name_keeps_its_kind(write_file, topics):
    assignments_import(path=small_file(write_file), nuggets="auto_edit", assigner="manual")
    before = table_counts()
    with pytest.raises(CommandError, match="already holds manual labels"):
        call_command("import_assignments", str(small_file(write_file, "c.jsonl")), "--nuggets", "auto_edit",
                     "--assigner", "auto", "--assigner-name", "manual")
    assert table_counts() == before


# --- Real data -------------------------------------------------------------------


def nist_counts(path: Path) -> dict[str, int]:
    """What the file holds, read independently with json."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    first_list = {}
    for record in records:
        first_list.setdefault(record["qid"], record["nuggets"])
    return {
        "answers": len(records),
        "topics": len({r["qid"] for r in records}),
        "runs": len({r["run_id"] for r in records}),
        "nuggets": sum(len(nuggets) for nuggets in first_list.values()),
        "labels": sum(len(r["nuggets"]) for r in records),
        "support": sum(n["assignment"] == "support" for r in records for n in r["nuggets"]),
        "partial_support": sum(n["assignment"] == "partial_support" for r in records for n in r["nuggets"]),
    }


def assert_matches_file(path: Path) -> None:
    expected = nist_counts(path)
    assert Answer.objects.count() == expected["answers"]
    assert NuggetSet.objects.filter(name="auto_edit").count() == expected["topics"]
    assert Run.objects.count() == expected["runs"]
    assert Nugget.objects.count() == expected["nuggets"]
    assert AssignmentLabel.objects.count() == expected["labels"]
    counts = Counter(AssignmentLabel.objects.values_list("label", flat=True))
    assert counts["support"] == expected["support"]
    assert counts["partial_support"] == expected["partial_support"]


def test_the_real_slice_imports_as_the_file_says(write_file):
    call_command("import_topics", str(SLICE / "topics.slice.tsv"))
    path = SLICE / "nugget_assignment.slice.jl"
    call_command("import_assignments", str(path), "--nuggets", "auto_edit", "--assigner", "manual")
    assert_matches_file(path)
    # Spot check against the file by hand: topic 2024-143869's first nugget on run BEST_cot_gpt3.5.
    record = next(
        json.loads(line) for line in path.read_text().splitlines()
        if '"2024-143869"' in line and '"BEST_cot_gpt3.5"' in line
    )
    label = AssignmentLabel.objects.get(
        answer__run__run_id="BEST_cot_gpt3.5", answer__topic_id="2024-143869", nugget__position=0
    )
    assert (label.nugget.text, label.label) == (record["nuggets"][0]["text"], record["nuggets"][0]["assignment"])


@pytest.mark.shared_data
def test_the_full_nist_file_imports_as_the_file_says(shared_data):
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"))
    path = shared_data / "nugget_assignment.20241108.jl"
    call_command("import_assignments", str(path), "--nuggets", "auto_edit", "--assigner", "manual")
    assert Answer.objects.count() == 927
    assert NuggetSet.objects.count() == 21
    assert_matches_file(path)
    # Nugget texts as the file has them: six NIST texts end with a space, and keep it.
    texts = {nugget["text"] for line in path.read_text().splitlines() for nugget in json.loads(line)["nuggets"]}
    assert len([text for text in texts if text != text.strip()]) == 6
    assert set(Nugget.objects.values_list("text", flat=True)) == texts
    before = table_counts()
    call_command("import_assignments", str(path), "--nuggets", "auto_edit", "--assigner", "manual")
    assert table_counts() == before


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ASSESSOR_BENCHMARK"), reason="set ASSESSOR_BENCHMARK=1 to run benchmarks")
def test_benchmark_scale_import_time(tmp_path, capsys):
    """146 runs x 301 topics x 20 nuggets = 878,920 labels; prints the time, asserts only the counts."""
    topics = [make_topic(f"2024-{n}").pk for n in range(301)]
    runs = [f"team{n % 30}.run{n}" for n in range(146)]
    rng = random.Random(0)
    path = tmp_path / "assignments.jsonl"
    with path.open("w") as handle:
        for topic in topics:
            nuggets = [(f"nugget {i} of {topic}", "vital" if i < 8 else "okay") for i in range(20)]
            for run in runs:
                labels = [rng.choice(["support", "partial_support", "not_support"]) for _ in nuggets]
                handle.write(assigned_line(topic, run, "word " * 200, [(t, i, a) for (t, i), a in zip(nuggets, labels, strict=False)]))
                handle.write("\n")
    timings = []
    for _ in range(2):
        wall, cpu = time.perf_counter(), time.process_time()
        assignments_import(path=path, nuggets="manual", assigner="manual")
        timings.append((time.perf_counter() - wall, time.process_time() - cpu))
    assert AssignmentLabel.objects.count() == 301 * 146 * 20
    with capsys.disabled():
        (first, first_cpu), (again, again_cpu) = timings
        print(
            f"\nimport_assignments, 878,920 labels: {first:.1f} s ({first_cpu:.1f} s CPU in this process); "
            f"the same file again: {again:.1f} s ({again_cpu:.1f} s CPU)"
        )


def test_a_nugget_text_is_kept_as_the_file_writes_it(write_file, topics):
    nuggets = [("Sky is blue ", "vital", "support"), ("  Rayleigh scattering", "okay", "not_support")]
    path = write_file("spaced.jsonl", assigned_line("2024-1", "runA", "The sky is blue.", nuggets) + "\n")
    assignments_import(path=path, nuggets="auto", assigner="auto")
    assert list(Nugget.objects.order_by("position").values_list("text", flat=True)) == [
        "Sky is blue ", "  Rayleigh scattering",
    ]  # fmt: skip
    # The same file again changes nothing: the texts compare as stored.
    assert assignments_import(path=path, nuggets="auto", assigner="auto").created == 0
    blank = write_file("blank.jsonl", assigned_line("2024-1", "runA", "x", [("   ", "vital", "support")]) + "\n")
    with pytest.raises(ImportFailure, match=r"field 'nuggets\[0\]\.text': empty"):
        assignments_import(path=blank, nuggets="auto", assigner="auto")
