"""Plots of the meta-evaluation as PNG bytes (scores of one source against another, label distributions), and
the leaderboards' plot as inline SVG (each run's mean with its 95% bootstrap interval over topics).

Uses matplotlib's object API on the Agg canvas (no pyplot global state), so
concurrent requests never draw on each other's figure.
"""

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import matplotlib
import numpy as np
from django.utils.safestring import SafeString, mark_safe

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.backends.backend_svg import FigureCanvasSVG  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from assessor.scoring.scores import Scores, ranked_run_ids  # noqa: E402
from metaeval.rankcorr import resampled_run_means, topic_draws  # noqa: E402


def scatter_png(
    points: Sequence[tuple[float, float]],
    *,
    x_label: str,
    y_label: str,
    title: str,
    tau: float | None = None,
    dpi: int = 110,
) -> bytes:
    figure = Figure(figsize=(5.2, 5.0), dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    many = len(points) > 500
    axes.scatter(xs, ys, s=6 if many else 18, alpha=0.25 if many else 0.75, color="#1f5fbf", edgecolors="none")
    if points and all(0 <= value <= 1 for value in xs + ys):
        # Scores on one 0..1 scale: the diagonal shows where the two sources agree.
        axes.plot([0, 1], [0, 1], color="#999999", linewidth=0.8, linestyle="--")
        axes.set_xlim(-0.03, 1.03)
        axes.set_ylim(-0.03, 1.03)
        axes.set_aspect("equal")
    axes.set_xlabel(x_label)
    axes.set_ylabel(y_label)
    heading = title
    if tau is not None and not math.isnan(tau):
        heading += f"\nKendall's tau = {tau:.3f}"
    heading += f" ({len(points)} points)"
    axes.set_title(heading, fontsize=10)
    axes.grid(True, linewidth=0.3, alpha=0.5)
    if not points:
        axes.text(0.5, 0.5, "no points in common", ha="center", va="center", transform=axes.transAxes)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def distribution_png(
    counts: Sequence[tuple[str, Sequence[int]]], *, labels: Sequence[str], title: str, dpi: int = 110
) -> bytes:
    """Each judge's share of each label, as grouped bars (one group per label, one bar per judge)."""
    figure = Figure(figsize=(6.4, 3.8), dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    width = 0.8 / max(len(counts), 1)
    colours = ["#1f5fbf", "#d9822b", "#2e8b57", "#8e44ad", "#7f7f7f"]
    for index, (judge, values) in enumerate(counts):
        total = sum(values)
        shares = [100 * value / total if total else 0.0 for value in values]
        positions = [i - 0.4 + width * (index + 0.5) for i in range(len(labels))]
        axes.bar(positions, shares, width=width, label=f"{judge} ({total})", color=colours[index % len(colours)])
    axes.set_xticks(range(len(labels)), list(labels))
    axes.set_ylabel("% of the judge's labels")
    axes.set_ylim(0, 100)
    axes.set_title(title, fontsize=10)
    axes.grid(True, axis="y", linewidth=0.3, alpha=0.5)
    axes.legend(fontsize=8, loc="upper right")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


# --- the leaderboards' plot: each run's mean with its interval ----------------------------------

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 0  # one seed: the page draws the same intervals on every load


@dataclass(frozen=True)
class RunInterval:
    run: str
    mean: float  # the leaderboard's figure (a topic without the run's score counting 0)
    low: float  # the 2.5th and 97.5th percentiles of the mean over resamples of the topics
    high: float


def run_mean_intervals(
    scores: Scores, metric: str, *, samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[RunInterval]:
    """Each run's mean of `metric` with its 95% percentile bootstrap interval, resampling the topics with
    replacement (metaeval.rankcorr's resampling, a missing topic counting 0 as in the run's mean), in the
    leaderboard's order: by the mean, best first, ties by run id. `scores` must hold its per-topic rows."""
    runs = ranked_run_ids(scores.run_means, metric=metric)
    topics = list(scores.topics)
    matrix = np.full((len(runs), len(topics)), np.nan)
    for row, run in enumerate(runs):
        for column, topic in enumerate(topics):
            values = scores.per_topic.get((run, topic))
            if values is not None and metric in values:
                matrix[row, column] = values[metric]
    if topics and runs:
        means = resampled_run_means(matrix, topic_draws(len(topics), samples=samples, seed=seed), missing="zero")
        lows, highs = np.percentile(means, 2.5, axis=0), np.percentile(means, 97.5, axis=0)
    else:
        lows = highs = np.zeros(len(runs))
    return [
        RunInterval(run=run, mean=scores.run_means[run].get(metric, 0.0), low=float(low), high=float(high))
        for run, low, high in zip(runs, lows, highs, strict=True)
    ]


def _mark_id(index: int) -> str:
    return f"run-mark-{index}"


def means_svg(intervals: Sequence[RunInterval], *, metric: str) -> SafeString:
    """The runs top to bottom in the given order, each a dot at its mean on a line over its interval, as an
    inline <svg>; each run's mark is a <g class="run-mark" data-run="..."> with a <title> of its figures."""
    height = 0.6 + 0.22 * max(len(intervals), 1)  # a run a line of text, so that the table stays near
    figure = Figure(figsize=(6.6, height), dpi=96, layout="constrained")
    FigureCanvasSVG(figure)
    axes = figure.add_subplot()
    for y, interval in enumerate(intervals):
        # One artist a run (one <g> in the SVG): the line over the interval, the dot at the mean.
        (mark,) = axes.plot(
            [interval.low, interval.mean, interval.high],
            [y, y, y],
            color="#1f5fbf",
            linewidth=1.6,
            marker="o",
            markersize=5,
            markevery=[1],
            solid_capstyle="butt",
        )
        mark.set_gid(_mark_id(y))
    # The first run at the top: the y axis runs downwards, so that the tick labels, too, come in the SVG (and
    # the page's text) in the leaderboard's order.
    axes.set_yticks(range(len(intervals)), [interval.run for interval in intervals], fontsize=8)
    axes.set_ylim(max(len(intervals), 1) - 0.3, -0.7)
    axes.set_xlabel(f"mean {metric} over topics, with its 95% bootstrap interval", fontsize=8)
    axes.tick_params(axis="x", labelsize=8)
    axes.grid(True, axis="x", linewidth=0.3, alpha=0.6)
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "leaderboard"}):
        figure.savefig(buffer, format="svg")
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    for index, interval in enumerate(intervals):
        title = f"{interval.run}: mean {interval.mean:.4f}, 95% interval {interval.low:.4f} to {interval.high:.4f}"
        svg = svg.replace(
            f'<g id="{_mark_id(index)}">',
            f'<g id="{_mark_id(index)}" class="run-mark" data-run="{escape(interval.run)}"><title>{escape(title)}</title>',
            1,
        )
    return mark_safe(svg)  # noqa: S308 - matplotlib's own SVG, the run ids escaped


def leaderboard_plot(scores: Scores, metric: str) -> dict:
    """What a leaderboard's plot shows (metaeval/templates/metaeval/run_plot.html): the SVG and its caption's
    figures."""
    intervals = run_mean_intervals(scores, metric)
    return {
        "svg": means_svg(intervals, metric=metric),
        "metric": metric,
        "runs": len(intervals),
        "topics": len(scores.topics),
        "samples": BOOTSTRAP_SAMPLES,
    }
