"""Plots of the meta-evaluation as PNG bytes: scores of one source against another, label distributions.

Uses matplotlib's object API on the Agg canvas (no pyplot global state), so
concurrent requests never draw on each other's figure.
"""

import io
import math
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


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
