"""import_scores: the export_scores TSV as a source `scores:NAME`."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from scipy.stats import kendalltau

from assessor.models import ImportBatch
from metaeval import kinds as metaeval_kinds
from metaeval.models import ImportedScore, ScoreTable
from metaeval.sources import source_parse, source_scores
from tests.builders import make_run

pytestmark = pytest.mark.django_db

TABLE = (
    "run_id\ttopic_id\tmetric\tvalue\n"
    "r1\tt1\tVstrict\t0.5\n"
    "r1\tt2\tVstrict\t1.0\n"
    "r1\tall\tVstrict\t0.75\n"
    "r2\tt1\tVstrict\t0.25\n"
    "r2\tt2\tVstrict\t0.5\n"
    "r2\tall\tVstrict\t0.375\n"
    "r3\tt1\tVstrict\t0.0\n"
    "r3\tall\tVstrict\t0.0\n"
)
OTHER = (
    "r1\tt1\tVstrict\t0.25\n"
    "r1\tt2\tVstrict\t1.0\n"
    "r2\tt1\tVstrict\t0.5\n"
    "r2\tt2\tVstrict\t0.75\n"
    "r3\tt1\tVstrict\t0.0\n"
)


def test_it_imports_a_table_and_reads_it_back_as_scores(write_file):
    call_command("import_scores", str(write_file("a.tsv", TABLE)), "--name", "official", stdout=StringIO())
    assert ImportedScore.objects.count() == 8
    scores = source_scores(source_parse("scores:official"))
    assert scores.metrics == ("Vstrict",)
    assert scores.per_topic[("r1", "t2")] == {"Vstrict": 1.0}
    assert scores.run_means["r2"] == {"Vstrict": 0.375}
    assert scores.topics == ["t1", "t2"] and scores.runs == ["r1", "r2", "r3"]


def test_two_tables_compare_and_runs_without_all_rows_get_their_mean(write_file):
    call_command("import_scores", str(write_file("a.tsv", TABLE)), "--name", "first", stdout=StringIO())
    call_command("import_scores", str(write_file("b.tsv", OTHER)), "--name", "second", stdout=StringIO())
    out = StringIO()
    call_command("metaeval", "--a", "scores:first", "--b", "scores:second", "--json", stdout=out)
    data = json.loads(out.getvalue())
    values = data["metrics"]["Vstrict"]
    # Pairs both have: r1t1 r1t2 r2t1 r2t2 r3t1.
    assert values["pairs"] == 5
    assert values["tau_all"] == pytest.approx(kendalltau([0.5, 1.0, 0.25, 0.5, 0.0], [0.25, 1.0, 0.5, 0.75, 0.0]).statistic)
    # Run means over t1, t2 (a missing answer counts 0): first (0.75, 0.375, 0), second (0.625, 0.625, 0).
    assert values["tau_run"] == pytest.approx(kendalltau([0.75, 0.375, 0.0], [0.625, 0.625, 0.0]).statistic)
    assert data["confusion"] is None


def test_a_table_of_only_all_rows_is_compared_at_run_level(write_file):
    only_means = "r1\tall\tVstrict\t0.2\nr2\tall\tVstrict\t0.9\nr3\tall\tVstrict\t0.5\n"
    call_command("import_scores", str(write_file("m.tsv", only_means)), "--name", "means", stdout=StringIO())
    call_command("import_scores", str(write_file("a.tsv", TABLE)), "--name", "first", stdout=StringIO())
    out = StringIO()
    call_command("metaeval", "--a", "scores:means", "--b", "scores:first", "--json", stdout=out)
    values = json.loads(out.getvalue())["metrics"]["Vstrict"]
    assert values["tau_run"] == pytest.approx(kendalltau([0.2, 0.9, 0.5], [0.75, 0.375, 0.0]).statistic)
    assert (values["runs"], values["pairs"], values["tau_all"]) == (3, 0, None)


def test_run_ids_with_a_team_prefix_match_the_collection(write_file):
    make_run("BEST_cot_gpt3.5")
    path = write_file("p.tsv", "citi.BEST_cot_gpt3.5\tall\tVstrict\t0.4\n")
    call_command("import_scores", str(path), "--name", "prefixed", stdout=StringIO())
    assert list(source_scores(source_parse("scores:prefixed")).run_means) == ["BEST_cot_gpt3.5"]


def test_importing_the_same_file_twice_adds_nothing(write_file):
    path = write_file("a.tsv", TABLE)
    call_command("import_scores", str(path), "--name", "official", stdout=StringIO())
    call_command("import_scores", str(path), "--name", "official", stdout=StringIO())
    assert ImportedScore.objects.count() == 8
    assert ImportBatch.objects.filter(kind=metaeval_kinds.IMPORT_SCORES).count() == 1


def test_a_contradicting_table_is_an_error_unless_replace(write_file):
    call_command("import_scores", str(write_file("a.tsv", TABLE)), "--name", "official", stdout=StringIO())
    changed = write_file("b.tsv", "r1\tt1\tVstrict\t0.5\nr1\tt2\tVstrict\t0.0\n")
    with pytest.raises(CommandError, match=r"b.tsv, line 2, field 'value': table 'official' holds 1.0"):
        call_command("import_scores", str(changed), "--name", "official")
    assert ImportedScore.objects.count() == 8
    call_command("import_scores", str(changed), "--name", "official", "--replace", stdout=StringIO())
    assert sorted(ScoreTable.objects.get().scores.values_list("topic_id", "value")) == [("t1", 0.5), ("t2", 0.0)]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("r1\tt1\tVstrict\t0.5\nr1\tt1\tVstrict\n", r"bad.tsv, line 2: expected 4 fields"),
        ("r1\tt1\tVstrict\t0.5\n\nr2\tt1\tVstrict\thigh\n", r"bad.tsv, line 3, field 'value': not a number: 'high'"),
        ("r1\tt1\tVstrict\tnan\n", r"bad.tsv, line 1, field 'value': not a finite number"),
        ("r1\tt1\tV strict!\t0.5\n", r"bad.tsv, line 1, field 'metric': not a metric name: 'V strict!'"),
        ("r1\tt1\t\t0.5\n", r"bad.tsv, line 1, field 'metric'"),
        ("r1\tt1\tV\t0.5\nr1\tt1\tV\t0.5\n", r"bad.tsv, line 2: run r1, topic t1, metric V repeated \(first on line 1\)"),
        ("", r"bad.tsv: the file is empty"),
        ("run_id\ttopic_id\tmetric\tvalue\n", r"bad.tsv: no scores in the file"),
    ],
)
def test_a_bad_table_names_the_line_and_imports_nothing(write_file, content, expected):
    path = write_file("bad.tsv", content)
    with pytest.raises(CommandError, match=expected):
        call_command("import_scores", str(path), "--name", "bad")
    assert not ScoreTable.objects.exists()
    assert not ImportBatch.objects.exists()


def test_a_table_name_must_be_a_slug(write_file):
    with pytest.raises(CommandError, match=r"--name: 'not a slug' holds a space: a name is 1 to 100 characters"):
        call_command("import_scores", str(write_file("a.tsv", TABLE)), "--name", "not a slug")


def test_a_table_written_by_export_scores_reads_back_as_the_same_scores(tmp_path, conditions):
    from django.core.management import get_commands

    if "export_scores" not in get_commands():
        pytest.skip("export_scores is not available")
    exported = tmp_path / "manual.tsv"
    call_command("export_scores", "--nuggets", "auto_edit", "--assigner", "manual", "--output", str(exported))
    call_command("import_scores", str(exported), "--name", "manual-copy", stdout=StringIO())
    original = source_scores(source_parse("auto_edit/manual"))
    copy = source_scores(source_parse("scores:manual-copy"))
    assert copy.per_topic == original.per_topic
    assert copy.run_means == original.run_means
    out = StringIO()
    call_command("metaeval", "--a", "auto_edit/manual", "--b", "scores:manual-copy", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["confusion"] is None
    assert data["metrics"]["Vstrict"]["pairs"] == 6 and data["metrics"]["Vstrict"]["tau_all"] == pytest.approx(1.0)


def test_the_kiddie_truth_leaderboard_with_its_column_names_imports(write_file):
    """The AutoJudge tools' ir_measures leaderboards may begin with a line naming the columns."""
    from tests.builders import REPO

    path = REPO / "demo" / "data" / "kiddie" / "eval" / "kiddie_fake.eval.ir_measures.txt"
    call_command("import_scores", str(path), "--name", "kiddie-truth", "--format", "ir_measures", stdout=StringIO())
    # 4 runs x (5 topics + all), from the file by hand.
    assert ImportedScore.objects.count() == 24
    assert ImportedScore.objects.get(run_id="run3", topic_id="all", metric="RELEVANCE").value == pytest.approx(0.316)
    assert ImportedScore.objects.get(run_id="run1", topic_id="leaf", metric="RELEVANCE").value == pytest.approx(0.85)
