"""Plots of the meta-evaluation as PNG bytes (scores of one source against another, label distributions), and
the leaderboards' plot as inline SVG (each run's mean with its 95% bootstrap interval over topics).

Uses matplotlib's object API on the Agg canvas (no pyplot global state), so
concurrent requests never draw on each other's figure.
"""

import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

import matplotlib
import numpy as np
from django.utils.safestring import SafeString, mark_safe

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
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


# The leaderboards' plot, drawn as SVG by hand: a page waits on it, and matplotlib took about half a second to
# draw a few dozen runs (docs/metaeval.md, "How fast the report family's pages are").
PLOT_WIDTH, LABEL_WIDTH, ROW_HEIGHT, AXIS_HEIGHT, PLOT_MARGIN = 634, 150, 21, 44, 12


def _ticks(low: float, high: float) -> list[float]:
    """About five round values spanning [low, high] (1, 2 or 5 times a power of ten apart)."""
    span = (high - low) or 1.0
    raw = span / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(power * factor for factor in (1, 2, 5, 10) if power * factor >= raw)
    first = math.floor(low / step) * step
    return [first + step * n for n in range(int(math.ceil((high - first) / step + 1e-9)) + 1)]


def _x_scale(intervals: Sequence[RunInterval]) -> tuple[list[float], Callable[[float], float]]:
    values = [value for interval in intervals for value in (interval.low, interval.mean, interval.high)] or [0.0]
    ticks = _ticks(min(values), max(values))
    low, high = ticks[0], ticks[-1] if ticks[-1] > ticks[0] else ticks[0] + 1
    right = PLOT_WIDTH - PLOT_MARGIN
    return ticks, lambda value: LABEL_WIDTH + (value - low) / (high - low) * (right - LABEL_WIDTH)


def means_svg(intervals: Sequence[RunInterval], *, metric: str) -> SafeString:
    """The runs top to bottom in the given order, each a dot at its mean on a line over its interval, as an
    inline <svg>; each run's mark is a <g class="run-mark" data-run="..."> with a <title> of its figures, its name
    at its left, so that the page's text names the runs in the leaderboard's order."""
    ticks, x = _x_scale(intervals)
    rows_bottom = PLOT_MARGIN + ROW_HEIGHT * max(len(intervals), 1)
    height = rows_bottom + AXIS_HEIGHT
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{PLOT_WIDTH}" height="{height}" '
        f'viewBox="0 0 {PLOT_WIDTH} {height}" font-family="sans-serif" font-size="11" role="img">'
    ]
    for tick in ticks:
        at = f"{x(tick):.1f}"
        parts.append(
            f'<line x1="{at}" x2="{at}" y1="{PLOT_MARGIN}" y2="{rows_bottom}" stroke="#ccc" stroke-width="0.5"/>'
        )
        parts.append(f'<text x="{at}" y="{rows_bottom + 14}" text-anchor="middle">{tick:g}</text>')
    for index, interval in enumerate(intervals):
        y = PLOT_MARGIN + ROW_HEIGHT * index + ROW_HEIGHT / 2
        title = f"{interval.run}: mean {interval.mean:.4f}, 95% interval {interval.low:.4f} to {interval.high:.4f}"
        parts.append(
            f'<g class="run-mark" data-run="{escape(interval.run)}"><title>{escape(title)}</title>'
            f'<text x="{LABEL_WIDTH - 8}" y="{y + 4:.1f}" text-anchor="end">{escape(interval.run)}</text>'
            f'<line x1="{x(interval.low):.1f}" x2="{x(interval.high):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
            'stroke="#1f5fbf" stroke-width="1.6"/>'
            f'<circle cx="{x(interval.mean):.1f}" cy="{y:.1f}" r="3.5" fill="#1f5fbf"/></g>'
        )
    label = f"mean {metric} over topics, with its 95% bootstrap interval"
    middle = (LABEL_WIDTH + PLOT_WIDTH - PLOT_MARGIN) / 2
    parts.append(f'<text x="{middle:.1f}" y="{rows_bottom + 34}" text-anchor="middle">{escape(label)}</text></svg>')
    return mark_safe("".join(parts))  # noqa: S308 - every text from the data is escaped


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
