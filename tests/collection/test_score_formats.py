"""Score tables in the trec_eval / ir_measures layout, out and in; team-prefixed run ids; one run's files in."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from assessor.collection.runs import RunResolver
from assessor.collection.score_formats import score_table_lines, trec_eval_lines
from assessor.importing.base import ImportFailure
from assessor.models import Run
from assessor.scoring.scores import Scores
from assignment.importing import assignments_import
from assignment.models import AssignmentLabel
from metaeval.comparison import comparison_build
from metaeval.importing import scores_import
from metaeval.models import ImportedScore
from tests.builders import make_run, make_topic

SCORES = Scores(
    metrics=("V", "L"),
    per_topic={("r1", "t1"): {"V": 0.5, "L": 10.0}, ("r2", "t1"): {"V": 1.0, "L": 20.0}},
    run_means={"r1": {"V": 0.25, "L": 5.0}, "r2": {"V": 0.5, "L": 10.0}},
    topics=["t1", "t2"],
    runs=["r1", "r2"],
)


def test_the_trec_eval_layout_is_run_measure_topic_value_with_all_for_the_mean():
    assert "".join(trec_eval_lines(SCORES)) == (
        "r1\tV\tt1\t0.5\n"
        "r1\tV\tall\t0.25\n"
        "r1\tL\tt1\t10.0\n"
        "r1\tL\tall\t5.0\n"
        "r2\tV\tt1\t1.0\n"
        "r2\tV\tall\t0.5\n"
        "r2\tL\tt1\t20.0\n"
        "r2\tL\tall\t10.0\n"
    )


@pytest.mark.django_db
def test_a_trec_eval_file_reads_back_as_the_same_table(tmp_path):
    path = tmp_path / "scores.trec_eval.txt"
    path.write_text("".join(trec_eval_lines(SCORES)))
    scores_import(path=path, name="back", layout="trec_eval")
    stored = {(s.run_id, s.topic_id, s.metric): s.value for s in ImportedScore.objects.all()}
    assert stored[("r1", "t1", "V")] == 0.5 and stored[("r2", "all", "L")] == 10.0
    assert len(stored) == 8


@pytest.mark.django_db
def test_trec_evals_own_three_columns_name_the_run_by_runid_or_by_flag(tmp_path):
    with_runid = tmp_path / "q.txt"
    with_runid.write_text("runid\tall\tsys1\nndcg_cut_10\t2024-1\t0.5\nndcg_cut_10\tall\t0.5\n")
    scores_import(path=with_runid, name="te", layout="trec_eval")
    assert set(ImportedScore.objects.values_list("run_id", "topic_id", "metric")) == {
        ("sys1", "2024-1", "ndcg_cut_10"),
        ("sys1", "all", "ndcg_cut_10"),
    }
    bare = tmp_path / "bare.txt"
    bare.write_text("P_10\t2024-1\t0.3\n")
    with pytest.raises(CommandError, match="--run-id"):
        call_command("import_scores", str(bare), "--name", "bare", "--format", "trec_eval")
    call_command("import_scores", str(bare), "--name", "bare", "--format", "trec_eval", "--run-id", "sys2")
    assert ImportedScore.objects.filter(table__name="bare", run_id="sys2").count() == 1
    other = tmp_path / "other.txt"
    other.write_text("sys3\tP_10\t2024-1\t0.3\n")
    with pytest.raises(CommandError, match="run 'sys3' in a file imported as run 'sys2'"):
        call_command("import_scores", str(other), "--name", "other", "--format", "trec_eval", "--run-id", "sys2")


@pytest.mark.django_db
def test_exports_write_run_ids_with_their_team_prefix_when_a_file_named_them_so():
    make_run("BEST_cot_gpt3.5")
    make_run("baseline")
    RunResolver().find("citi.BEST_cot_gpt3.5")  # a support file names the run with its team
    assert Run.objects.get(run_id="BEST_cot_gpt3.5").published_id == "citi.BEST_cot_gpt3.5"
    scores = Scores(
        metrics=("V",),
        per_topic={("BEST_cot_gpt3.5", "t1"): {"V": 1.0}, ("baseline", "t1"): {"V": 0.0}},
        run_means={"BEST_cot_gpt3.5": {"V": 1.0}, "baseline": {"V": 0.0}},
        topics=["t1"],
        runs=["BEST_cot_gpt3.5", "baseline"],
    )
    prefixed = "".join(score_table_lines(scores, layout="trec_eval", team_prefix=True))
    assert prefixed.splitlines()[0] == "citi.BEST_cot_gpt3.5\tV\tt1\t1.0"
    assert "baseline\tV\tall\t0.0" in prefixed
    plain = "".join(score_table_lines(scores, layout="tsv"))
    assert plain.splitlines()[1] == "BEST_cot_gpt3.5\tt1\tV\t1.0"
    assert "".join(score_table_lines(scores, layout="tsv", team_prefix=True)).splitlines()[1].startswith("citi.")


@pytest.mark.django_db
def test_a_condition_exported_as_trec_eval_compares_as_a_score_table(tmp_path):
    from tests.metaeval.builders import build_conditions

    build_conditions()
    path = tmp_path / "manual.txt"
    call_command(
        "export_scores",
        "--nuggets",
        "auto_edit",
        "--assigner",
        "manual",
        "--format",
        "trec_eval",
        "--output",
        str(path),
    )
    call_command("import_scores", str(path), "--name", "manual-te", "--format", "trec_eval")
    comparison = comparison_build("auto_edit/manual", "scores:manual-te", metrics=["Vstrict"])
    (tau,) = comparison.taus
    assert tau.tau_run == pytest.approx(1.0) and tau.pearson_all == pytest.approx(1.0)


def nuggetizer_line(qid: str, text: str, **extra) -> str:
    return json.dumps(
        {
            "qid": qid,
            "query": "q",
            "answer_text": text,
            "nuggets": [{"text": "Sky is blue", "importance": "vital", "assignment": "support"}],
            **extra,
        }
    )


@pytest.mark.django_db
def test_nuggetizers_assign_output_is_one_runs_file_that_the_run_id_flag_names(tmp_path):
    """nuggetizer's batch assigner writes run_id = the answer file's stem into every record (cli/io.py
    get_run_id, cli/adapters.py): `--run-id` names the run the records belong to, whatever they call it."""
    make_topic("2024-1"), make_topic("2024-2")
    path = tmp_path / "assigned.jsonl"
    path.write_text(
        nuggetizer_line("2024-1", "The sky is blue.", run_id="answers") + "\n"
        + nuggetizer_line("2024-2", "Blue, the sky.", run_id="answers") + "\n"
    )  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "import_assignments", str(path), "--nuggets", "auto", "--assigner", "auto", "--run-id", "myteam.run1",
        stdout=out, stderr=err,
    )  # fmt: skip
    assert list(Run.objects.values_list("run_id", flat=True)) == ["myteam.run1"]
    assert {label.answer.topic_id for label in AssignmentLabel.objects.all()} == {"2024-1", "2024-2"}
    assert "the records name the run 'answers' (nuggetizer writes its answer file's name there); imported as " \
        "run 'myteam.run1'" in err.getvalue()  # fmt: skip


@pytest.mark.django_db
def test_without_the_flag_a_one_run_file_that_makes_its_run_is_told_apart(tmp_path):
    make_topic("2024-1")
    path = tmp_path / "assigned.jsonl"
    path.write_text(nuggetizer_line("2024-1", "The sky is blue.", run_id="answers") + "\n")
    result = assignments_import(path=path, nuggets="auto", assigner="auto")
    assert list(Run.objects.values_list("run_id", flat=True)) == ["answers"]
    assert any("run 'answers' was not in the collection and was made from this file" in w for w in result.warnings)
    # A file of records without run ids still needs the flag.
    path.write_text(nuggetizer_line("2024-1", "The sky is blue.") + "\n")
    with pytest.raises(CommandError, match="needs --run-id"):
        call_command("import_assignments", str(path), "--nuggets", "auto", "--assigner", "auto")


@pytest.mark.django_db
def test_a_file_naming_two_runs_is_not_one_runs_file(tmp_path):
    make_topic("2024-1"), make_topic("2024-2")
    path = tmp_path / "answers.jsonl"
    path.write_text(
        nuggetizer_line("2024-1", "The sky is blue.", run_id="answers") + "\n"
        + nuggetizer_line("2024-2", "Blue, the sky.", run_id="other") + "\n"
    )  # fmt: skip
    with pytest.raises(ImportFailure, match=r"line 2, field 'run_id': run 'other' in a file whose line 1 names run "):
        assignments_import(path=path, nuggets="auto", assigner="auto", run_id="run1")
    assert not Run.objects.exists()
    # The team-prefixed form of the flag's run is that run, and asks for no warning.
    path.write_text(nuggetizer_line("2024-1", "The sky is blue.", run_id="team.run1") + "\n")
    result = assignments_import(path=path, nuggets="auto", assigner="auto", run_id="run1")
    assert list(Run.objects.values_list("run_id", flat=True)) == ["run1"] and not result.warnings


@pytest.mark.django_db
def test_label_exports_write_run_ids_with_their_team_prefix_when_asked(tmp_path):
    from tests.metaeval.builders import build_conditions, build_support

    build_conditions()
    build_support()
    RunResolver().find("team.r1")
    RunResolver().find("other.s1")

    def run_ids(command: str, *arguments: str) -> list[str]:
        path = tmp_path / f"{command}.jsonl"
        call_command(command, *arguments, "--output", str(path))
        return [json.loads(line)["run_id"] for line in path.read_text().splitlines()]

    assignments = ("export_assignments", "--nuggets", "auto_edit", "--assigner", "manual")
    assert "r1" in run_ids(*assignments) and "team.r1" not in run_ids(*assignments)
    prefixed = run_ids(*assignments, "--team-prefix")
    assert "team.r1" in prefixed and "r1" not in prefixed and "r2" in prefixed
    support = ("export_support", "--method", "scratch")
    assert sorted(set(run_ids(*support))) == ["s1", "s2"]
    assert sorted(set(run_ids(*support, "--team-prefix"))) == ["other.s1", "s2"]
