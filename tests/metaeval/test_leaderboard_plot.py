"""The leaderboards' plot: each run's mean with its 95% bootstrap interval over topics, worked by hand on cases
whose percentiles are certain, and the SVG's one mark a run in the leaderboard's order."""

import re

import pytest

from assessor.contracts import Scores
from metaeval.plots import means_svg, run_mean_intervals


def scores_of(per_topic: dict[tuple[str, str], float], topics: list[str], means: dict[str, float]) -> Scores:
    return Scores(
        metrics=("m",),
        per_topic={key: {"m": value} for key, value in per_topic.items()},
        run_means={run: {"m": mean} for run, mean in means.items()},
        topics=topics,
        runs=sorted(means),
    )


# r1 scores 1 and 1/2 on t1, t2; r2 1/4 on t1 and nothing on t2 (0); r3 nothing on t1 (0) and 1 on t2. A mean
# counts a missing topic 0: r1 3/4, r2 1/8, r3 1/2.
TWO_TOPICS = scores_of(
    {("r1", "t1"): 1.0, ("r1", "t2"): 0.5, ("r2", "t1"): 0.25, ("r3", "t2"): 1.0},
    ["t1", "t2"],
    {"r1": 0.75, "r2": 0.125, "r3": 0.5},
)


def test_over_two_topics_the_interval_runs_from_the_lower_score_to_the_higher():
    # A resample of two topics draws t1 twice with probability 1/4, t2 twice 1/4: of 1000 resamples, far more
    # than the 25 below the 2.5th percentile draw each (fewer than 25 has probability below 1e-90), so the
    # percentiles are the means of t1, t1 and of t2, t2: a run's two topic scores, a missing one 0.
    intervals = run_mean_intervals(TWO_TOPICS, "m")
    assert [(i.run, i.mean, i.low, i.high) for i in intervals] == [
        ("r1", 0.75, 0.5, 1.0),
        ("r3", 0.5, 0.0, 1.0),
        ("r2", 0.125, 0.0, 0.25),
    ]


def test_over_one_topic_the_interval_is_the_mean_and_ties_go_by_run_id():
    one = scores_of({("b", "t1"): 0.5, ("a", "t1"): 0.5, ("c", "t1"): 0.9}, ["t1"], {"a": 0.5, "b": 0.5, "c": 0.9})
    intervals = run_mean_intervals(one, "m")
    assert [(i.run, i.low, i.high) for i in intervals] == [("c", 0.9, 0.9), ("a", 0.5, 0.5), ("b", 0.5, 0.5)]


def test_the_interval_holds_the_mean_and_narrows_as_the_topics_agree():
    topics = [f"t{n}" for n in range(20)]
    steady = {("s", topic): 0.5 for topic in topics}
    wild = {("w", topic): float(n % 2) for n, topic in enumerate(topics)}  # 0, 1, 0, 1...: mean 1/2
    intervals = run_mean_intervals(scores_of({**steady, **wild}, topics, {"s": 0.5, "w": 0.5}), "m")
    by_run = {i.run: i for i in intervals}
    assert (by_run["s"].low, by_run["s"].high) == (0.5, 0.5)
    # The mean of 20 draws of a fair 0/1 coin: its standard error sqrt(1/4 / 20) = 0.112, so the interval is
    # about 1/2 -+ 1.96 x 0.112 = (0.28, 0.72), in twentieths.
    assert by_run["w"].low == pytest.approx(0.28, abs=0.06) and by_run["w"].high == pytest.approx(0.72, abs=0.06)


def test_the_svg_has_one_mark_a_run_in_the_given_order_with_its_figures():
    svg = str(means_svg(run_mean_intervals(TWO_TOPICS, "m"), metric="m"))
    assert svg.startswith("<svg") and "<?xml" not in svg
    assert re.findall(r'class="run-mark" data-run="([^"]+)"', svg) == ["r1", "r3", "r2"]
    assert "<title>r3: mean 0.5000, 95% interval 0.0000 to 1.0000</title>" in svg
    # The tick labels, the runs' names, come in the same order, the first at the top: a page read as text (or
    # searched for a run's first mention) meets them in the leaderboard's order.
    assert svg.index(">r1<") < svg.index(">r3<") < svg.index(">r2<")
    odd = means_svg(run_mean_intervals(scores_of({("a<b", "t1"): 1.0}, ["t1"], {"a<b": 1.0}), "m"), metric="m")
    assert 'data-run="a&lt;b"' in odd
