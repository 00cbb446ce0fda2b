"""Score tables as files, in two layouts.

- `tsv` (the project's, with a header): `run_id topic_id metric value`.
- `trec_eval` (what trec_eval and ir_measures users read): `run measure topic value`,
  tab-separated and without a header, as `trec_eval -q` prints its rows with the
  run id in front (the layout of the TREC AutoJudge tools).
Both give each evaluated topic's row, then the run's mean under the topic `all`.
Run ids may be written as the track published them, with their team prefix
(`citi.BEST_cot_gpt3.5`), where an import has seen that form.
"""

from collections.abc import Iterator, Mapping

from assessor.models import Run
from assessor.scoring.scores import ALL_TOPICS, Scores

SCORES_HEADER = "run_id\ttopic_id\tmetric\tvalue\n"
LAYOUTS = ("tsv", "trec_eval")


def score_value(value: float) -> str:
    """The shortest text that reads back as the same float."""
    return repr(float(value))


def run_published_ids() -> dict[str, str]:
    """Stored run id -> the id with its team prefix, for the runs an import has seen with one."""
    return {
        run_id: published
        for run_id, published in Run.objects.exclude(published_id="").values_list("run_id", "published_id")
    }


def run_display(run_id: str, published: Mapping[str, str] | None) -> str:
    return published.get(run_id, run_id) if published else run_id


def trec_eval_lines(scores: Scores, *, published: Mapping[str, str] | None = None) -> Iterator[str]:
    """`run<TAB>measure<TAB>topic<TAB>value` rows: each evaluated topic, then `all` (the run's mean)."""
    for run in scores.runs:
        name = run_display(run, published)
        for metric in scores.metrics:
            for topic in scores.topics:
                values = scores.per_topic.get((run, topic))
                if values is not None:
                    yield f"{name}\t{metric}\t{topic}\t{score_value(values[metric])}\n"
            yield f"{name}\t{metric}\t{ALL_TOPICS}\t{score_value(scores.run_means[run][metric])}\n"


def tsv_lines(scores: Scores, *, published: Mapping[str, str] | None = None) -> Iterator[str]:
    """`run_id<TAB>topic_id<TAB>metric<TAB>value` with a header, run by run, then its `all` rows."""
    yield SCORES_HEADER
    for run in scores.runs:
        name = run_display(run, published)
        for topic in scores.topics:
            values = scores.per_topic.get((run, topic))
            if values is None:
                continue
            for metric in scores.metrics:
                yield f"{name}\t{topic}\t{metric}\t{score_value(values[metric])}\n"
        means = scores.run_means[run]
        for metric in scores.metrics:
            yield f"{name}\t{ALL_TOPICS}\t{metric}\t{score_value(means[metric])}\n"


def score_table_lines(scores: Scores, *, layout: str = "tsv", team_prefix: bool = False) -> Iterator[str]:
    """A score table in `layout` (LAYOUTS), run ids with their team prefix if asked."""
    published = run_published_ids() if team_prefix else None
    if layout == "trec_eval":
        return trec_eval_lines(scores, published=published)
    if layout == "tsv":
        return tsv_lines(scores, published=published)
    raise ValueError(f"unknown layout {layout!r}: {', '.join(LAYOUTS)}")


def team_prefix_query(request) -> bool:
    """A download asks for run ids with their team prefix (`?team_prefix=1`)."""
    return request.GET.get("team_prefix", "") not in ("", "0")


def score_layout_query(request) -> tuple[str, bool]:
    """A download's layout (`?format=trec_eval`, else tsv) and run-id form (`?team_prefix=1`)."""
    layout = request.GET.get("format", "tsv")
    return (layout if layout in LAYOUTS else "tsv"), team_prefix_query(request)
