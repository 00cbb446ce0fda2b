"""PrefNugget's preference checkpoint: written as the reference writes it, read back, and bad files refused."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from assessor.importing.base import ImportFailure
from assessor.jobs.engine import job_run_sync
from assessor.models import LabelSource
from preferences.checkpoint import checkpoint_lines, preferences_import
from preferences.llm import preferences_job_create
from preferences.models import PreferenceLabel
from tests.preferences.expected import expected_labels

pytestmark = pytest.mark.django_db


def records(lines) -> list[dict]:
    return [json.loads(line) for line in lines]


def test_the_checkpoint_holds_each_decided_pair_both_ways_and_the_aggregates(llm_server, kiddie):
    job_run_sync(preferences_job_create(name="llm").pk)
    written = records(checkpoint_lines(name="llm"))
    comparisons = [r for r in written if r["_type"] == "comparison"]
    aggregates = {(r["topic_id"], r["run_id"]): r for r in written if r["_type"] == "aggregate"}
    expected = expected_labels()
    decided = {key: label for key, label in expected.items() if label in (1, 2)}
    assert len(comparisons) == 2 * len(decided)
    # The given orientation first, then every flipped copy; a pair's texts travel with it.
    half = len(decided)
    for given, flipped in zip(comparisons[:half], comparisons[half:], strict=True):
        assert (given["run_id"], given["run_id2"]) == (flipped["run_id2"], flipped["run_id"])
        assert {given["better_passage"], flipped["better_passage"]} == {1, 2}
        assert given["passage_1"] == flipped["passage_2"]
        assert decided[(given["query_id"], given["run_id"], given["run_id2"])] == given["better_passage"]
    assert list(comparisons[0]) == [
        "run_id", "run_id2", "query_id", "query_title", "query_problem", "query_background", "passage_1",
        "passage_2", "better_passage", "confidence", "reasoning", "_type",
    ]  # fmt: skip
    bee = next(r for r in comparisons if r["query_id"] == "bee")
    assert bee["query_title"] == "bee honey making nectar hive sting" and bee["passage_1"].startswith("Bees")
    # Aggregates: wins - losses from the hand-listed labels, and whom each report beat.
    for (topic, run), aggregate in aggregates.items():
        wins = [b if a == run else a for (t, a, b), label in decided.items() if t == topic and run in (a, b)
                and (label == 1) == (a == run)]  # fmt: skip
        losses = sum(1 for (t, a, b), _ in decided.items() if t == topic and run in (a, b)) - len(wins)
        assert aggregate["borda_score"] == len(wins) - losses
        assert sorted(aggregate["better_than"]) == sorted(wins)


def test_a_checkpoint_reads_back_as_the_same_preferences(llm_server, kiddie, tmp_path):
    job_run_sync(preferences_job_create(name="llm").pk)
    path = tmp_path / "llm.preferences.jsonl"
    out = StringIO()
    call_command("export_preferences", "--name", "llm", "--output", str(path), stdout=out)
    call_command("import_preferences", str(path), "--name", "from-file", stdout=out)
    source = LabelSource.objects.get(family="preferences", name="from-file")
    assert source.kind == LabelSource.Kind.FILE and source.imported_from is not None
    decided = {key: label for key, label in expected_labels().items() if label in (1, 2)}
    read = {
        (topic, a, b): label
        for topic, a, b, label in PreferenceLabel.objects.filter(source=source).values_list(
            "topic_id", "first__run__run_id", "second__run__run_id", "label"
        )
    }
    assert read == decided
    # Importing the same file again changes nothing.
    result = preferences_import(path=path, name="from-file")
    assert (result.created, result.replaced) == (0, 0)


def comparison(**fields) -> str:
    record = {"run_id": "run1", "run_id2": "run2", "query_id": "bee", "query_title": "t", "passage_1": "a",
              "passage_2": "b", "better_passage": 1, "confidence": 0.9, "reasoning": "", "_type": "comparison"}  # fmt: skip
    record.update(fields)
    return json.dumps(record)


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        ([comparison(better_passage=3)], "line 1, field 'better_passage': expected a whole number from 0 to 2, got 3"),
        ([comparison(), comparison(run_id="nope")], "line 2, field 'run_id': unknown run 'nope'"),
        ([comparison(), "{"], "line 2: not valid JSON"),
        (
            [
                comparison(),
                comparison(run_id="run2", run_id2="run1", better_passage=2),
                comparison(run_id="run2", run_id2="run1"),
            ],
            "line 3, field 'better_passage': this pair's preference contradicts line 1",
        ),  # fmt: skip
        (
            [comparison(query_id="leaf"), comparison(query_id="nowhere")],
            "line 2, field 'run_id': no report of run 'run1'",
        ),
        ([comparison(_type="other")], "line 1, field '_type': expected comparison or aggregate"),
        ([comparison(run_id2="run1")], "line 1, field 'run_id2': a report compared with itself"),
    ],
)
def test_a_bad_checkpoint_names_its_line_and_field_and_imports_nothing(kiddie, tmp_path, lines, where):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportFailure) as failure:
        preferences_import(path=path, name="bad")
    assert where in str(failure.value)
    assert not PreferenceLabel.objects.exists() and not LabelSource.objects.filter(name="bad").exists()
    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command("import_preferences", str(path), "--name", "bad", stdout=StringIO())


def test_a_checkpoint_of_the_reference_layout_imports_its_first_orientation(kiddie, tmp_path):
    path = tmp_path / "ref.jsonl"
    aggregate = json.dumps({"run_id": "run1", "topic_id": "bee", "borda_score": 1, "win_frac": 1.0,
                            "better_than": ["run2"], "worse_than": [], "_type": "aggregate"})  # fmt: skip
    path.write_text("\n".join([comparison(), comparison(run_id="run2", run_id2="run1", better_passage=2), aggregate]))
    result = preferences_import(path=path, name="ref")
    assert (result.lines, result.created, result.unchanged) == (2, 1, 1)
    label = PreferenceLabel.objects.get(source__name="ref")
    assert (label.first.run.run_id, label.second.run.run_id, label.label, label.confidence) == ("run1", "run2", 1, 0.9)
