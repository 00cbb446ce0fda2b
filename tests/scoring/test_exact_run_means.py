"""A leaderboard's run means are the means of the scores' exact fractions: runs whose means are one number share
a rank, on the scores from the labels and on the kept scores alike."""

import math
from fractions import Fraction

from assessor.contracts import Scores
from assessor.scoring.scores import run_means, runs_ranked


def test_run_means_of_one_number_tie_and_share_a_rank():
    # r1 scores 1/3, 1, 1 and r2 2/3, 2/3, 1: both means are 7/9, worked by hand. The floats' exact sums split them.
    thirds = {"r1": [1 / 3, 1.0, 1.0], "r2": [2 / 3, 2 / 3, 1.0], "r3": [0.0, 1.0, 1.0]}
    assert math.fsum(thirds["r1"]) / 3 != math.fsum(thirds["r2"]) / 3  # what a float mean did
    per_topic = {(run, f"t{n}"): {"score": value} for run, values in thirds.items() for n, value in enumerate(values)}
    means = run_means(per_topic, runs=sorted(thirds), topics=["t0", "t1", "t2"], metrics=("score",))
    assert means["r1"]["score"] == means["r2"]["score"] == float(Fraction(7, 9))
    assert means["r3"]["score"] == float(Fraction(2, 3))
    scores = Scores(
        metrics=("score",), per_topic=per_topic, run_means=means, topics=["t0", "t1", "t2"], runs=sorted(thirds)
    )
    ranked = [(row.run_id, row.rank) for row in runs_ranked(scores, metric="score")]
    assert ranked == [("r1", 1), ("r2", 1), ("r3", 3)]


def test_a_missing_topic_counts_0_in_the_exact_mean():
    per_topic = {("r1", "t0"): {"score": 1 / 3}}
    means = run_means(per_topic, runs=["r1"], topics=["t0", "t1"], metrics=("score",))
    assert means["r1"]["score"] == float(Fraction(1, 6))
