"""metaeval --truth on the kiddie collection's truth leaderboard, against a judged leaderboard made by hand."""

import json
import math
import warnings
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.metaeval.autojudge_reference import reference_modules
from tests.metaeval.truth_data import KIDDIE_TRUTH, kiddie_leaderboards_import

pytestmark = pytest.mark.django_db

FIGURES = ("kendall", "pearson", "spearman", "tauap_b", "tau_gap", "kendall@3")


@pytest.fixture
def leaderboards(tmp_path):
    return kiddie_leaderboards_import(tmp_path)


def metaeval_json(*options: str) -> dict:
    out = StringIO()
    call_command(
        "metaeval",
        "--a",
        "scores:judged",
        "--truth",
        "scores:kiddie-truth",
        "--top-k",
        "3",
        "--json",
        *options,
        stdout=out,
    )
    return json.loads(out.getvalue())


def test_hand_worked_figures_of_the_kiddie_truth(leaderboards):
    (zero,) = metaeval_json("--on-missing", "zero")["pairs"]
    assert (zero["metric"], zero["truth_metric"], zero["runs"]) == ("JUDGE", "RELEVANCE", 4)
    assert (zero["missing_in_judged"], zero["missing_in_truth"]) == (["run4"], ["run5"])
    # run4 counts 0: the judged order run2 run1 run3 run4 reverses one pair of the truth's six: (4 - 2) / 6.
    assert zero["kendall"] == pytest.approx(2 / 3)
    # tau_GAP: run1 under run2 is wrong (0); run3 and run4 are below everything ahead of them in the truth too (1, 1).
    assert zero["tau_gap"] == pytest.approx(2 * 2 / 3 - 1)
    (skip,) = metaeval_json("--on-missing", "skip")["pairs"]
    assert skip["runs"] == 3 and skip["kendall"] == pytest.approx(1 / 3)  # one pair of three reversed
    assert zero["kendall@3"] == skip["kendall@3"] == pytest.approx(1 / 3)  # the truth's top 3 shared runs
    # bee: every judged score the same, no tau there once run4 is left out; the four other topics have one.
    assert skip["per_topic"]["topics"]["bee"]["kendall"] is None
    assert skip["per_topic"]["topics_counted"]["kendall"] == 4
    assert zero["per_topic"]["topics"]["bee"]["kendall"] is not None  # run4's 0 is below the others' 0.8


@pytest.mark.parametrize("rule", ["zero", "skip"])
def test_the_commands_figures_are_meta_evaluates(leaderboards, rule):
    (pair,) = metaeval_json("--on-missing", rule)["pairs"]
    with reference_modules() as reference, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected: dict = {}
        topics: dict = {}
        for methods in (["kendall", "pearson", "spearman", "tauap_b", "tau_gap"], ["kendall@3"]):
            evaluator = reference.evaluation.LeaderboardEvaluator(
                KIDDIE_TRUTH,
                truth_has_header=True,
                on_missing={"zero": "default", "skip": "skip"}[rule],
                correlation_methods=methods,
            )
            expected.update(evaluator.evaluate(leaderboards)[("RELEVANCE", "JUDGE")])
            for topic, values in evaluator.evaluate_per_topic(leaderboards)[("RELEVANCE", "JUDGE")].items():
                topics.setdefault(topic, {}).update(values)

    def same(got, want) -> bool:
        return (got is None and math.isnan(want)) or (got is not None and abs(got - float(want)) <= 1e-9)

    assert all(same(pair[name], expected[name]) for name in FIGURES), (pair, expected)
    assert set(pair["per_topic"]["topics"]) == set(topics) == {"leaf", "cloud", "bee", "earthworms", "hibernation"}
    # bee's judged scores all tie once run4 is left out: the app gives it no figures, where the tool still gives a
    # tau_ap_b and a tau_GAP from its tie-breaking alone; every other topic is the tool's.
    tied = ["bee"] if rule == "skip" else []
    assert pair["per_topic"]["topics_tied"] == tied
    for topic in tied:
        assert set(pair["per_topic"]["topics"][topic].values()) == {None}
    compared = {topic: values for topic, values in topics.items() if topic not in tied}
    assert len(compared) == 5 - len(tied)
    for topic, values in compared.items():
        assert all(same(pair["per_topic"]["topics"][topic][name], values[name]) for name in FIGURES), topic
    for name in FIGURES:
        defined = [float(values[name]) for values in compared.values() if not math.isnan(values[name])]
        assert pair["per_topic"]["mean"][name] == pytest.approx(sum(defined) / len(defined), abs=1e-9)


def test_error_names_the_runs_and_the_table_prints_the_means(leaderboards):
    with pytest.raises(CommandError, match="missing in the judged leaderboard: run4; missing in the truth: run5"):
        metaeval_json()  # error is the default, as in autojudge-evaluate
    out = StringIO()
    call_command(
        "metaeval", "--a", "scores:judged", "--truth", "scores:kiddie-truth", "--on-missing", "zero",
        "--top-k", "3", "--per-topic", stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "truth runs the judged source lacks (count 0): run4" in text
    assert "judged runs the truth lacks (left out): run5" in text
    assert "JUDGE=RELEVANCE" in text and "0.6667" in text and "  hibernation" in text
    with pytest.raises(CommandError, match="--b and --truth exclude each other"):
        call_command("metaeval", "--a", "scores:judged", "--b", "scores:judged", "--truth", "scores:kiddie-truth")
    with pytest.raises(CommandError, match="no --topics or --topics-of"):
        metaeval_json("--topics", "leaf")
    with pytest.raises(CommandError, match="has no metric 'NOPE'"):
        metaeval_json("--metric", "JUDGE=NOPE")
