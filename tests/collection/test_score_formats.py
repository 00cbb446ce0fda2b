"""Score tables in the trec_eval / ir_measures layout, out and in; team-prefixed run ids; one run's files in."""

import io
import json
import warnings

import pytest
from django.core.management import CommandError, call_command

from assessor.collection.runs import RunResolver
from assessor.collection.score_formats import ScoreFile, ScoreFileRefused, rows_policy, score_table_lines
from assessor.importing.base import ImportFailure
from assessor.models import Run
from assessor.scoring.scores import Scores
from assignment.importing import assignments_import
from assignment.models import AssignmentLabel
from metaeval.comparison import comparison_build
from metaeval.importing import scores_import
from metaeval.models import ImportedScore
from tests.builders import make_run, make_topic
from tests.metaeval.autojudge_reference import reference_modules

SCORES = Scores(
    metrics=("V", "L"),
    per_topic={("r1", "t1"): {"V": 0.5, "L": 10.0}, ("r2", "t1"): {"V": 1.0, "L": 20.0}},
    run_means={"r1": {"V": 0.25, "L": 5.0}, "r2": {"V": 0.5, "L": 10.0}},
    topics=["t1", "t2"],
    runs=["r1", "r2"],
)


# The column orders of autojudge-evaluate 1.1.0 (eval_results/io.py): trec_eval `measure topic_id value` (one run),
# tot `run_id measure topic_id value`, ir_measures `run_id topic_id measure value`; `all` is the topic of a mean.
# r1 and r2 did not answer t2: their means count it 0 (V 0.5/2, L 10/2 and 1.0/2, 20/2).


def test_the_tot_layout_is_run_measure_topic_value_with_all_for_the_mean():
    assert "".join(score_table_lines(SCORES, ScoreFile(layout="tot"))) == (
        "r1\tV\tt1\t0.5\n"
        "r1\tV\tall\t0.25\n"
        "r1\tL\tt1\t10.0\n"
        "r1\tL\tall\t5.0\n"
        "r2\tV\tt1\t1.0\n"
        "r2\tV\tall\t0.5\n"
        "r2\tL\tt1\t20.0\n"
        "r2\tL\tall\t10.0\n"
    )


def test_the_ir_measures_layout_is_run_topic_measure_value():
    assert "".join(score_table_lines(SCORES, ScoreFile(layout="ir_measures"))) == (
        "r1\tt1\tV\t0.5\n"
        "r1\tt1\tL\t10.0\n"
        "r1\tall\tV\t0.25\n"
        "r1\tall\tL\t5.0\n"
        "r2\tt1\tV\t1.0\n"
        "r2\tt1\tL\t20.0\n"
        "r2\tall\tV\t0.5\n"
        "r2\tall\tL\t10.0\n"
    )


def test_the_rag4reports_layout_is_topic_run_measure_value():
    assert "".join(score_table_lines(SCORES, ScoreFile(layout="rag4reports"))) == (
        "t1\tr1\tV\t0.5\n"
        "t1\tr1\tL\t10.0\n"
        "all\tr1\tV\t0.25\n"
        "all\tr1\tL\t5.0\n"
        "t1\tr2\tV\t1.0\n"
        "t1\tr2\tL\t20.0\n"
        "all\tr2\tV\t0.5\n"
        "all\tr2\tL\t10.0\n"
    )


def test_the_jsonl_layout_is_one_object_a_row_with_autojudge_evaluates_keys():
    lines = list(score_table_lines(SCORES, ScoreFile(layout="jsonl")))
    assert lines[0] == '{"run_id": "r1", "topic_id": "t1", "measure": "V", "value": 0.5}\n'
    assert lines[3] == '{"run_id": "r1", "topic_id": "all", "measure": "L", "value": 5.0}\n'
    assert len(lines) == 8 and ScoreFile(layout="jsonl").file_name("scores") == "scores.jsonl.jsonl"


@pytest.mark.django_db
def test_the_trec_eval_layout_is_one_runs_measure_topic_value_as_trec_eval_prints_it():
    assert "".join(score_table_lines(SCORES, ScoreFile(layout="trec_eval", run="r2"))) == (
        "V\tt1\t1.0\nL\tt1\t20.0\nrunid\tall\tr2\nV\tall\t0.5\nL\tall\t10.0\n"
    )
    with pytest.raises(ScoreFileRefused, match="holds one run and these scores have 2: name one"):
        score_table_lines(SCORES, ScoreFile(layout="trec_eval"))
    with pytest.raises(ScoreFileRefused, match="no run 'r9' in these scores; runs: r1, r2"):
        score_table_lines(SCORES, ScoreFile(layout="trec_eval", run="r9"))


def test_zero_rows_make_the_means_recomputed_from_the_rows_the_tables():
    rows = [line.split("\t") for line in score_table_lines(SCORES, ScoreFile(layout="tot", zero_rows=True))]
    assert ["r1", "V", "t2", "0.0\n"] in rows and ["r2", "L", "t2", "0.0\n"] in rows
    for run in ("r1", "r2"):
        for metric in ("V", "L"):
            topics = [float(v) for r, m, t, v in rows if (r, m) == (run, metric) and t != "all"]
            (mean,) = [float(v) for r, m, t, v in rows if (r, m, t) == (run, metric, "all")]
            assert len(topics) == 2 and sum(topics) / len(topics) == mean
    # Without them, the mean of the rows is another figure: r1's V would be 0.5, not 0.25.
    assert "t2" not in "".join(score_table_lines(SCORES, ScoreFile(layout="tot")))
    assert rows_policy(SCORES, ScoreFile()) == (
        "2 topic rows of runs that did not answer them are left out; they count 0 in the `all` means "
        "(--zero-rows, or zeros=1 on a download, writes them, so that means recomputed from the rows agree)"
    )
    assert rows_policy(SCORES, ScoreFile(zero_rows=True)).startswith(
        "2 topic rows of runs that did not answer them are written as 0"
    )


@pytest.mark.django_db
@pytest.mark.parametrize("layout", ["tsv", "tot", "ir_measures", "rag4reports", "jsonl"])
def test_each_layout_reads_back_as_the_same_table(tmp_path, layout):
    path = tmp_path / f"scores.{layout}.txt"
    path.write_text("".join(score_table_lines(SCORES, ScoreFile(layout=layout, zero_rows=True))))
    scores_import(path=path, name="back", layout=layout)
    stored = {(s.run_id, s.topic_id, s.metric): s.value for s in ImportedScore.objects.all()}
    assert stored[("r1", "t1", "V")] == 0.5 and stored[("r2", "all", "L")] == 10.0 and stored[("r1", "t2", "L")] == 0.0
    assert len(stored) == 12


@pytest.mark.django_db
def test_a_layouts_rows_in_another_layout_are_refused_with_the_layout_they_look_like(tmp_path):
    four = tmp_path / "four.txt"
    four.write_text("sys1\tP_10\t2024-1\t0.3\n")
    with pytest.raises(
        ImportFailure, match=r"line 1: expected measure topic value, found 4 fields \(four: --format tot"
    ):
        scores_import(path=four, name="x", layout="trec_eval")
    three = tmp_path / "three.txt"
    three.write_text("P_10\t2024-1\t0.3\n")
    with pytest.raises(ImportFailure, match=r"expected 4 fields \(run measure topic value\), found 3 \(three: "):
        scores_import(path=three, name="x", layout="tot")


@pytest.mark.django_db
def test_trec_evals_own_output_names_its_run_in_the_runid_row_after_the_topics(tmp_path):
    # trec_eval -q pads the measure and prints the topics first, then the summary that starts with runid.
    output = tmp_path / "sys1.trec_eval"
    output.write_text(
        "ndcg_cut_10           \t2024-1\t0.5000\n"
        "num_q                 \tall\t1\n"  # not a topic row: a count of the summary
        "runid                 \tall\tsys1\n"
        "ndcg_cut_10           \tall\t0.5000\n"
    )
    scores_import(path=output, name="te", layout="trec_eval")
    assert set(ImportedScore.objects.values_list("run_id", "topic_id", "metric", "value")) == {
        ("sys1", "2024-1", "ndcg_cut_10", 0.5),
        ("sys1", "all", "num_q", 1.0),
        ("sys1", "all", "ndcg_cut_10", 0.5),
    }
    bare = tmp_path / "bare.txt"
    bare.write_text("P_10\t2024-1\t0.3\n")
    with pytest.raises(CommandError, match="--run-id"):
        call_command("import_scores", str(bare), "--name", "bare", "--format", "trec_eval")
    call_command("import_scores", str(bare), "--name", "bare", "--format", "trec_eval", "--run-id", "sys2")
    assert ImportedScore.objects.filter(table__name="bare", run_id="sys2").count() == 1
    with pytest.raises(CommandError, match="the file is run 'sys1', not 'sys2'"):
        call_command("import_scores", str(output), "--name", "other", "--format", "trec_eval", "--run-id", "sys2")
    two = tmp_path / "two.txt"
    two.write_text("runid\tall\tsys1\nP_10\tall\t0.3\nrunid\tall\tsys3\nP_10\tall\t0.2\n")
    with pytest.raises(ImportFailure, match=r"line 3, field 'runid': run 'sys3' after run 'sys1' \(line 1\)"):
        scores_import(path=two, name="two", layout="trec_eval")
    other = tmp_path / "other.txt"
    other.write_text("sys3\tP_10\t2024-1\t0.3\n")
    with pytest.raises(CommandError, match="run 'sys3' in a file imported as run 'sys2'"):
        call_command("import_scores", str(other), "--name", "other", "--format", "tot", "--run-id", "sys2")


QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d4 2\n"
RUN = (
    "q1 Q0 d3 1 9.0 sys\nq1 Q0 d2 2 8.0 sys\nq1 Q0 d1 3 7.0 sys\n"
    "q2 Q0 d4 1 9.0 sys\nq2 Q0 d5 2 8.0 sys\nq2 Q0 d1 3 7.0 sys\n"
)


@pytest.mark.django_db
def test_ir_measures_per_query_output_reads_as_ir_measures_computes_it(tmp_path):
    """`ir_measures QRELS RUN MEASURES -q` prints `query measure value` and `all` rows: imported with the run's id,
    each value is the one ir_measures' own API gives."""
    import subprocess
    import sys

    import ir_measures

    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    printed = subprocess.run(
        [sys.executable, "-m", "ir_measures", str(tmp_path / "qrels"), str(tmp_path / "run"), "nDCG@10 P@2", "-q",
         "-p", "-1"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    (tmp_path / "sys.ir_measures").write_text(printed)
    call_command(
        "import_scores",
        str(tmp_path / "sys.ir_measures"),
        "--name",
        "irm",
        "--format",
        "ir_measures",
        "--run-id",
        "sys",
    )
    stored = {
        (topic, metric): value
        for topic, metric, value in ImportedScore.objects.values_list("topic_id", "metric", "value")
    }
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels")))
    run = list(ir_measures.read_trec_run(str(tmp_path / "run")))
    expected = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc([ir_measures.nDCG @ 10, ir_measures.P @ 2], qrels, run)
    }
    assert {key: value for key, value in stored.items() if key[0] != "all"} == expected
    aggregate = ir_measures.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.P @ 2], qrels, run)
    assert {metric: value for (topic, metric), value in stored.items() if topic == "all"} == {
        str(measure): value for measure, value in aggregate.items()
    }
    assert stored[("q1", "P@2")] == 0.5 and stored[("q2", "P@2")] == 0.5  # by hand: one relevant of the first two


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
    prefixed = "".join(score_table_lines(scores, ScoreFile(layout="tot", team_prefix=True)))
    assert prefixed.splitlines()[0] == "citi.BEST_cot_gpt3.5\tV\tt1\t1.0"
    assert "baseline\tV\tall\t0.0" in prefixed
    plain = "".join(score_table_lines(scores, ScoreFile()))
    assert plain.splitlines()[1] == "BEST_cot_gpt3.5\tt1\tV\t1.0"
    assert "".join(score_table_lines(scores, ScoreFile(team_prefix=True))).splitlines()[1].startswith("citi.")
    # A one-run file is asked for by either form of the run's id, and written in the form asked.
    one = "".join(
        score_table_lines(scores, ScoreFile(layout="trec_eval", run="citi.BEST_cot_gpt3.5", team_prefix=True))
    )
    assert one == "V\tt1\t1.0\nrunid\tall\tciti.BEST_cot_gpt3.5\nV\tall\t1.0\n"


@pytest.mark.django_db
def test_a_condition_exported_in_each_layout_compares_as_a_score_table(tmp_path):
    from tests.metaeval.builders import build_conditions

    build_conditions()
    condition = ("--nuggets", "auto_edit", "--assigner", "manual")
    for layout in ("tot", "ir_measures"):
        path = tmp_path / f"manual.{layout}"
        err = io.StringIO()
        call_command("export_scores", *condition, "--format", layout, "--output", str(path), stderr=err)
        assert "rows: " in err.getvalue()
        call_command("import_scores", str(path), "--name", f"manual-{layout}", "--format", layout)
        comparison = comparison_build("auto_edit/manual", f"scores:manual-{layout}", metrics=["Vstrict"])
        (tau,) = comparison.taus
        assert tau.tau_run == pytest.approx(1.0) and tau.pearson_all == pytest.approx(1.0)
    with pytest.raises(CommandError, match="the trec_eval layout holds one run"):
        call_command("export_scores", *condition, "--format", "trec_eval", stdout=io.StringIO())
    out = io.StringIO()
    call_command("export_scores", *condition, "--format", "trec_eval", "--run", "r1", stdout=out, stderr=io.StringIO())
    assert "runid\tall\tr1\n" in out.getvalue() and all(
        len(line.split("\t")) == 3 for line in out.getvalue().splitlines()
    )


@pytest.mark.django_db
def test_a_download_names_its_layout_and_rows_and_refuses_a_one_run_layout_of_many(organizer):
    from django.urls import reverse

    from tests.metaeval.builders import build_conditions

    build_conditions()
    url = reverse("collection:download_scores", args=["auto_edit", "manual"])
    response = organizer.get(url, {"format": "tot", "zeros": "1"})
    assert response.status_code == 200
    assert 'filename="main.scores.auto_edit.manual.tot.zeros.txt"' in response["Content-Disposition"]
    assert response["X-Score-Rows"] == "every run has a row for each of the 2 evaluated topics"
    refused = organizer.get(url, {"format": "trec_eval"})
    assert refused.status_code == 400 and "holds one run" in refused.content.decode()
    one = organizer.get(url, {"format": "trec_eval", "run": "r1"})
    assert 'filename="main.scores.auto_edit.manual.r1.trec_eval.txt"' in one["Content-Disposition"]
    assert b"runid\tall\tr1\n" in b"".join(one.streaming_content)


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


@pytest.mark.shared_data
@pytest.mark.django_db
def test_on_nists_labels_zero_rows_give_the_mean_a_tool_recomputes(shared_data, tmp_path):
    """webis-manual-manual answered 4 of the 21 topics NIST judged: the mean of its rows is 0.336, the
    track's mean (a missing topic counts 0) 0.064; with the zero rows the two agree."""
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=io.StringIO())
    call_command(
        "import_assignments", str(shared_data / "nugget_assignment.20241108.jl"), "--nuggets", "auto_edit",
        "--nuggets-name", "nist", "--assigner", "manual", "--assigner-name", "nist", stdout=io.StringIO(),
    )  # fmt: skip

    def webis_vstrict(*flags: str) -> tuple[list[float], float]:
        path = tmp_path / "scores.txt"
        call_command(
            "export_scores", "--nuggets", "nist", "--assigner", "nist", "--format", "tot", *flags,
            "--output", str(path), stderr=io.StringIO(),
        )  # fmt: skip
        rows = [line.split("\t") for line in path.read_text().splitlines()]
        mine = [
            (topic, float(value))
            for run, metric, topic, value in rows
            if (run, metric) == ("webis-manual-manual", "Vstrict")
        ]
        return [value for topic, value in mine if topic != "all"], dict(mine)["all"]

    topics, mean = webis_vstrict()
    assert len(topics) == 4 and round(sum(topics) / len(topics), 3) == 0.336 and round(mean, 3) == 0.064
    topics, mean = webis_vstrict("--zero-rows")
    assert len(topics) == 21 and sum(topics) / len(topics) == pytest.approx(mean, abs=1e-15)


# --- the AutoJudge tools read what the app writes, and the app what they write ---------------------------------

# Three runs on three topics; r3 did not answer t2 (0 in its mean, and a zero row when asked).
TOOL_SCORES = Scores(
    metrics=("NUGGET_COVERAGE", "F1"),
    per_topic={
        (run, topic): {"NUGGET_COVERAGE": (i + 1) / (j + 3), "F1": (i + j) / 7}
        for i, run in enumerate(("r1", "r2", "r3"))
        for j, topic in enumerate(("t1", "t2", "t3"))
        if (run, topic) != ("r3", "t2")
    },
    topics=["t1", "t2", "t3"],
    runs=["r1", "r2", "r3"],
)
TOOL_SCORES.run_means = {
    run: {
        m: sum(TOOL_SCORES.per_topic.get((run, t), {}).get(m, 0.0) for t in TOOL_SCORES.topics) / 3
        for m in TOOL_SCORES.metrics
    }
    for run in TOOL_SCORES.runs
}
# autojudge-base's reader names; its trec_eval reads one run a file, named by the file.
TOOL_LAYOUTS = ["ir_measures", "tot", "rag4reports", "jsonl", "trec_eval"]


def expected_cells(scores: Scores, runs: list[str], *, zero_rows: bool) -> dict[tuple[str, str, str], float]:
    cells = {}
    for run in runs:
        for topic in scores.topics:
            values = scores.per_topic.get((run, topic))
            if values is None and zero_rows:
                values = dict.fromkeys(scores.metrics, 0.0)
            for metric, value in (values or {}).items():
                cells[(run, topic, metric)] = value
        for metric, value in scores.run_means[run].items():
            cells[(run, "all", metric)] = value
    return cells


@pytest.mark.django_db
@pytest.mark.parametrize("zero_rows", [False, True])
@pytest.mark.parametrize("layout", TOOL_LAYOUTS)
def test_autojudge_bases_reader_reads_each_file_the_app_writes_with_the_same_figures(tmp_path, layout, zero_rows):
    one_run = layout == "trec_eval"
    path = tmp_path / ("r2" if one_run else f"scores.{layout}")
    path.write_text(
        "".join(
            score_table_lines(TOOL_SCORES, ScoreFile(layout=layout, zero_rows=zero_rows, run="r2" if one_run else ""))
        )
    )
    with reference_modules() as reference:
        leaderboard = reference.leaderboard.Leaderboard.load(path, format=layout)
        read = {
            (entry.run_id, entry.topic_id, measure): float(value)
            for entry in leaderboard.entries
            for measure, value in entry.values.items()
            if measure != "runid"  # trec_eval's `runid all NAME` row, which names the run
        }
        if layout != "rag4reports":  # autojudge-evaluate's own reader, as meta-evaluate reads a leaderboard
            result = reference.eval_results.load(
                path, format=layout, recompute_aggregates=False, verify=False, on_missing="ignore"
            )
            evaluated = {
                (entry.run_id, entry.topic_id, entry.measure): entry.value
                for entry in result.entries
                if entry.measure != "runid"
            }
            assert evaluated == read
    assert read == expected_cells(TOOL_SCORES, ["r2"] if one_run else TOOL_SCORES.runs, zero_rows=zero_rows)
    if zero_rows:  # the `all` rows are the means autojudge-evaluate recomputes from the topic rows
        with reference_modules() as reference:
            if layout != "rag4reports":
                recomputed = reference.eval_results.load(
                    path,
                    format=layout,
                    drop_aggregates=True,
                    recompute_aggregates=True,
                    verify=False,
                    on_missing="ignore",
                )
                for entry in recomputed.entries:
                    if entry.topic_id == "all" and entry.measure != "runid":
                        assert entry.value == pytest.approx(read[(entry.run_id, "all", entry.measure)], abs=1e-12)


@pytest.mark.django_db
@pytest.mark.parametrize("layout", TOOL_LAYOUTS)
def test_the_app_reads_the_leaderboards_autojudge_bases_writer_writes(tmp_path, layout):
    one_run = layout == "trec_eval"
    path = tmp_path / f"written.{layout}"
    with reference_modules() as reference:
        module = reference.leaderboard
        spec = module.LeaderboardSpec(measures=(module.MeasureSpec("NUGGET_COVERAGE"), module.MeasureSpec("F1")))
        builder = module.LeaderboardBuilder(spec)
        for (run, topic), values in TOOL_SCORES.per_topic.items():
            if not one_run or run == "r2":
                builder.add(run_id=run, topic_id=topic, values=dict(values))
        # r3's missing topic counts 0 in its `all` row, as the app counts it (autojudge-base's fix_aggregate).
        board = builder.build(expected_topic_ids=TOOL_SCORES.topics, on_missing="fix_aggregate")
        board.write(path, format=layout)
    scores_import(path=path, name="written", layout=layout, run_id="r2" if one_run else None)
    stored = {(s.run_id, s.topic_id, s.metric): s.value for s in ImportedScore.objects.all()}
    expected = expected_cells(TOOL_SCORES, ["r2"] if one_run else TOOL_SCORES.runs, zero_rows=False)
    assert stored.keys() == expected.keys()
    for cell, value in expected.items():
        assert stored[cell] == pytest.approx(value, abs=1e-12), cell


@pytest.mark.django_db
def test_a_jsonl_row_without_a_field_is_refused_with_its_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"run_id": "r1", "topic_id": "t1", "measure": "F1", "value": 0.5}\n{"run_id": "r1", "topic_id": "t2", "value": 0.5}\n'
    )
    with pytest.raises(ImportFailure, match=r"line 2.*no 'measure' in the row"):
        scores_import(path=path, name="bad", layout="jsonl")
    path.write_text('{"run_id": "r1", "topic_id": "t1", "measure": "F1", "value": 0.5}\nnot json\n')
    with pytest.raises(ImportFailure, match=r"line 2.*not JSON"):
        scores_import(path=path, name="bad", layout="jsonl")
    assert not ImportedScore.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("layout", ["ir_measures", "tot", "jsonl", "trec_eval"])
def test_the_app_reads_the_leaderboards_autojudge_evaluates_writer_writes(tmp_path, layout):
    one_run = layout == "trec_eval"
    runs = ["r2"] if one_run else TOOL_SCORES.runs
    path = tmp_path / f"written.{layout}"
    with reference_modules() as reference:
        module = reference.eval_results
        builder = module.EvalResultBuilder(module.MeasureSpecs.from_single(dict.fromkeys(TOOL_SCORES.metrics, "float")))
        for (run, topic), values in TOOL_SCORES.per_topic.items():
            if run in runs:
                for metric, value in values.items():
                    builder.add(run, topic, metric, value)
        for run in runs:
            for metric, value in TOOL_SCORES.run_means[run].items():
                builder.add(run, "all", metric, value)
        module.write(builder.build(compute_aggregates=False, verify=False, on_missing="ignore"), path, layout)
    scores_import(path=path, name="written", layout=layout, run_id="r2" if one_run else None)
    stored = {(s.run_id, s.topic_id, s.metric): s.value for s in ImportedScore.objects.all()}
    assert stored == expected_cells(TOOL_SCORES, runs, zero_rows=False)


@pytest.mark.django_db
def test_a_jsonl_topic_id_or_value_written_as_a_number_or_text_reads_as_the_tools_read_it(tmp_path):
    path = tmp_path / "typed.jsonl"
    path.write_text(
        '{"run_id": "r1", "topic_id": 2024, "measure": "F1", "value": 1}\n'
        '{"run_id": "r1", "topic_id": "all", "measure": "F1", "value": "0.25"}\n'
    )
    scores_import(path=path, name="typed", layout="jsonl")
    stored = {(s.run_id, s.topic_id, s.metric): s.value for s in ImportedScore.objects.all()}
    assert stored == {("r1", "2024", "F1"): 1.0, ("r1", "all", "F1"): 0.25}


@pytest.mark.django_db
def test_meta_evaluate_reads_a_folder_of_the_apps_trec_eval_files_with_the_measures_named(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    for run in TOOL_SCORES.runs:  # one file a run, named by its run id
        # With zero rows: under its default --on-missing error, meta-evaluate refuses a run without a topic's row.
        file = ScoreFile(layout="trec_eval", run=run, zero_rows=True)
        (folder / run).write_text("".join(score_table_lines(TOOL_SCORES, file)))
    truth = tmp_path / "truth.txt"  # the truth orders the runs r3, r1, r2; the app's F1 means order them r3, r2, r1
    truth.write_text("".join(f"{run}\tall\tT\t{value}\n" for run, value in (("r1", 0.5), ("r2", 0.25), ("r3", 0.75))))
    assert [TOOL_SCORES.run_means[run]["F1"] for run in TOOL_SCORES.runs] == [3 / 21, 6 / 21, 6 / 21]
    with reference_modules() as reference, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        methods = {"correlation_methods": ["kendall"], "eval_format": "trec_eval"}
        with pytest.raises(ValueError, match="Measure 'runid' not found in aggregate rows"):
            reference.evaluation.LeaderboardEvaluator(truth, **methods).evaluate(folder)
        named = reference.evaluation.LeaderboardEvaluator(truth, eval_measures=["F1"], **methods).evaluate(folder)
        holey = tmp_path / "holey"
        holey.mkdir()
        for run in TOOL_SCORES.runs:
            (holey / run).write_text("".join(score_table_lines(TOOL_SCORES, ScoreFile(layout="trec_eval", run=run))))
        with pytest.raises(Exception, match=r"incomplete topic sets[\s\S]*r3: missing \['t2'\]"):
            reference.evaluation.LeaderboardEvaluator(truth, eval_measures=["F1"], **methods).evaluate(holey)
    # F1 means: r1 3/21, r2 and r3 6/21 (r3's missing t2 counts 0). Truth r3 > r1 > r2: (r1, r2) reversed,
    # (r3, r1) agreed, (r3, r2) tied in the app: tau-b = (1 - 1) / sqrt(3 x 2) = 0.
    assert named[("T", "F1")]["kendall"] == pytest.approx(0.0)
