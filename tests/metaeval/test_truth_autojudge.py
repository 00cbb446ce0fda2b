"""A judged leaderboard against a truth: every figure equals autojudge-evaluate 1.1.0's meta-evaluate to 1e-9.

The reference is the installed package's own LeaderboardEvaluator, run on files written for it
(tests/metaeval/autojudge_reference.py says how it is loaded). The app's figures come from
metaeval.truth on the same leaderboards.
"""

import math
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from metaeval.truth import RunsMismatch, correlations, per_topic_correlations, top_k_name
from tests.metaeval.autojudge_reference import reference_modules, write_ir_measures

METHODS = ["kendall", "pearson", "spearman", "tauap_b", "tau_gap"]
# The app's rule -> the tool's --on-missing.
TOOL_RULE = {"zero": "default", "skip": "skip", "error": "error"}


@pytest.fixture(scope="module")
def reference():
    with reference_modules() as modules:
        yield modules


def same(got: float, expected: float) -> bool:
    expected = float(expected)
    return (math.isnan(got) and math.isnan(expected)) or abs(got - expected) <= 1e-9


def random_case(seed: int, rule: str):
    """(truth, judged): topic -> run -> score, with `all` as a topic; ties on even seeds; runs missing unless error."""
    rng = np.random.default_rng(seed)
    runs = [f"run{index:02d}" for index in range(int(rng.integers(6, 15)))]
    topics = [f"t{index}" for index in range(int(rng.integers(2, 5)))]

    def value() -> float:
        return float(rng.integers(0, 5)) / 4 if seed % 2 == 0 else float(rng.random())

    truth = {topic: {run: value() for run in runs} for topic in [*topics, "all"]}
    judged_runs = list(runs)
    if rule != "error":
        for run in rng.choice(runs, size=int(rng.integers(1, 3)), replace=False):
            judged_runs.remove(str(run))
        judged_runs += [f"extra{index}" for index in range(int(rng.integers(0, 3)))]
    judged = {topic: {run: value() for run in judged_runs} for topic in [*topics, "all"]}
    if rule != "error":
        for topic in topics:  # one more run without a row on the topic
            judged[topic].pop(str(rng.choice(judged_runs)))
    return truth, judged


def rows(table: dict[str, dict[str, float]], measure: str) -> list[tuple[str, str, str, float]]:
    """The rows in run-id order, `all` last (the order the app writes them in)."""
    runs = sorted({run for leaderboard in table.values() for run in leaderboard})
    return [
        (run, topic, measure, table[topic][run])
        for run in runs
        for topic in sorted(table, key=lambda topic: (topic == "all", topic))
        if run in table[topic]
    ]


def tool_figures(reference, tmp_path: Path, truth, judged, *, rule: str, top_k: int):
    """meta-evaluate's figures of the `all` rows and per topic: the five methods in one call, kendall@k in
    another (a call with an @k method restricts every method to the shared runs)."""
    truth_file = write_ir_measures(tmp_path / "truth.txt", rows(truth, "T"))
    judged_file = write_ir_measures(tmp_path / "judged.txt", rows(judged, "E"))
    figures: dict = {}
    topics: dict = {}
    for methods in (METHODS, [top_k_name(top_k)]):
        evaluator = reference.evaluation.LeaderboardEvaluator(
            truth_file, on_missing=TOOL_RULE[rule], correlation_methods=methods
        )
        with quiet():
            figures.update(evaluator.evaluate(judged_file)[("T", "E")])
            for topic, values in evaluator.evaluate_per_topic(judged_file)[("T", "E")].items():
                topics.setdefault(topic, {}).update(values)
    return figures, topics


@contextmanager
def quiet():
    """The tool warns (RuntimeWarning) of all-tied rankings; the figures are what is compared."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("rule", ["zero", "skip", "error"])
@pytest.mark.parametrize("seed", range(12))
def test_every_figure_equals_meta_evaluate_on_random_leaderboards(reference, tmp_path, seed, rule):
    truth, judged = random_case(seed, rule)
    top_k = (3, 5, 10)[seed % 3]
    expected, expected_topics = tool_figures(reference, tmp_path, truth, judged, rule=rule, top_k=top_k)

    got = correlations(truth["all"], judged["all"], on_missing=rule, top_k=top_k)
    assert set(got) == set(expected) == {*METHODS, top_k_name(top_k)}
    for name, value in expected.items():
        assert same(got[name], value), (name, got[name], value)

    per_topic = per_topic_correlations(
        {t: b for t, b in truth.items() if t != "all"},
        {t: b for t, b in judged.items() if t != "all"},
        on_missing=rule,
        top_k=top_k,
    )
    assert sorted(per_topic.topics) == sorted(expected_topics)
    for topic, values in expected_topics.items():
        figures = per_topic.topics[topic]
        assert figures is not None
        for name, value in values.items():
            assert same(figures[name], value), (topic, name, figures[name], value)
    for name in expected:
        defined = [float(v[name]) for v in expected_topics.values() if not math.isnan(v[name])]
        assert per_topic.counted[name] == len(defined)
        assert same(per_topic.mean[name], sum(defined) / len(defined) if defined else math.nan)


def test_error_refuses_what_meta_evaluate_refuses_and_names_the_runs(reference, tmp_path):
    truth, judged = random_case(3, "error")
    for leaderboard in judged.values():  # run02 judged nowhere, extra0 judged everywhere
        del leaderboard["run02"]
        leaderboard["extra0"] = 0.5
    with pytest.raises(ValueError, match="Run ID mismatch"), quiet():
        tool_figures(reference, tmp_path, truth, judged, rule="error", top_k=5)
    missing = sorted(set(truth["all"]) - set(judged["all"]))
    extra = sorted(set(judged["all"]) - set(truth["all"]))
    with pytest.raises(RunsMismatch) as refused:
        correlations(truth["all"], judged["all"], on_missing="error", top_k=5)
    assert (missing, extra) == (["run02"], ["extra0"])
    assert "missing in the judged leaderboard: run02; missing in the truth: extra0" in str(refused.value)


TRUTH = {"r1": 0.9, "r2": 0.5, "r3": 0.4, "r4": 0.1}
JUDGED = {"r1": 0.3, "r2": 0.5, "r3": 0.4}  # r4 missing


def test_hand_worked_figures_with_a_missing_run():
    # zero: r4 counts 0. Truth order r1 r2 r3 r4; judged 0.3 0.5 0.4 0: of the 6 pairs, (r1,r2) and (r1,r3) are
    # reversed, so tau = (4 - 2) / 6. tau_GAP: judged order r2 r3 r1 r4; r3 below r2 by 0.1, ordered rightly (1);
    # r1 below r2, r3 with gaps 0.4 + 0.5, both wrong (0); r4 below all with gaps 0.4 + 0.3 + 0.8, right (1):
    # 2 x 2/3 - 1.
    zero = correlations(TRUTH, JUDGED, on_missing="zero", top_k=3)
    assert zero["kendall"] == pytest.approx(1 / 3)
    assert zero["tau_gap"] == pytest.approx(1 / 3)
    # skip: r1 r2 r3 only, two pairs reversed of three.
    skip = correlations(TRUTH, JUDGED, on_missing="skip", top_k=3)
    assert skip["kendall"] == pytest.approx(-1 / 3)
    # kendall@3 is over the shared runs whatever the rule: the truth's top 3 of r1 r2 r3.
    assert zero["kendall@3"] == skip["kendall@3"] == pytest.approx(-1 / 3)


def test_top_k_is_the_truths_top_k_not_the_judged_ones():
    truth = {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0, "e": 0.0}
    judged = {"a": 0.0, "b": 1.0, "c": 5.0, "d": 3.0, "e": 4.0}
    # The truth's top 3 are a, b, c, which the judged scores order c, b, a: -1. (The judged top 3, c, e, d, would
    # give 1/3: the truth orders them c, d, e, one pair of three reversed.)
    assert correlations(truth, judged, on_missing="error", top_k=3)["kendall@3"] == pytest.approx(-1.0)


def test_tau_ap_b_counts_an_all_tied_side_as_0_as_pyircore_does():
    truth = {"a": 3.0, "b": 2.0, "c": 1.0}
    judged = {"a": 1.0, "b": 1.0, "c": 1.0}
    # tau_ap_b(truth | judged): judged ties everything, 0; tau_ap_b(judged | truth): no run is above another in
    # judged, so every share is 0 and the direction is 2 x 0 - 1 = -1. The mean: -0.5.
    assert correlations(truth, judged, on_missing="error", top_k=3)["tauap_b"] == pytest.approx(-0.5)


def test_a_constant_leaderboard_has_no_pearson_as_pandas_gives_it():
    # 0.8 three times has a mean that rounds off 0.8, so deviations of 1e-17 would give r near 0, not none.
    truth = {"a": 0.9, "b": 0.7, "c": 0.3}
    assert math.isnan(correlations(truth, dict.fromkeys(truth, 0.8), on_missing="error", top_k=3)["pearson"])
