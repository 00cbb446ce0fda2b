"""Score tables as files, in the layouts the field's tools name so (autojudge-evaluate 1.1.0's names).

- `tsv` (the project's, with a header): `run_id topic_id metric value`.
- `tot`: `run measure topic value`, no header: `trec_eval -q` rows with the run id in
  front, as the TREC AutoJudge tools write a leaderboard of many runs.
- `ir_measures`: `run topic measure value`, no header (autojudge-evaluate's
  ir_measures layout; ir_measures' own per-query output is the same without the run).
- `trec_eval`: trec_eval's own `measure topic value`, no header, of one run: its
  topics, then its `runid all NAME` row and the run's means.
- `rag4reports`: `topic run measure value`, no header (autojudge-base's rag4reports
  layout, the Rag4Reports leaderboards').
- `jsonl`: one `{"run_id", "topic_id", "measure", "value"}` object a line, the keys in
  that order and the value a number (autojudge-evaluate's `*.eval.jsonl`).
Each gives the evaluated topics' rows and the run's mean under the topic `all`.

A run that did not answer an evaluated topic scores 0 there, inside its mean. Its
row is left out unless `zero_rows`: a tool that recomputes means from the rows
then gets the project's figure. Run ids may be written as the track published
them, with their team prefix (`citi.BEST_cot_gpt3.5`), where an import has seen that form.
Topics are written as the campaign's files name them (`published_id`), never as stored keys.
"""

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from assessor.models import Run
from assessor.models.keys import published_id
from assessor.scoring.scores import ALL_TOPICS, Scores

SCORES_HEADER = "run_id\ttopic_id\tmetric\tvalue\n"
# Each layout's name and its columns; the one list the commands, the pages and the importer offer.
LAYOUTS: dict[str, str] = {
    "tsv": "run_id topic_id metric value, with a header (export_scores)",
    "tot": "run measure topic value (trec_eval -q rows with the run in front; autojudge-evaluate's tot)",
    "ir_measures": "run topic measure value, or one run's query measure value (ir_measures -q)",
    "trec_eval": "measure topic value, one run (trec_eval -q; its runid row names the run)",
    "rag4reports": "topic run measure value (the Rag4Reports leaderboards; autojudge-base's rag4reports)",
    "jsonl": 'one {"run_id", "topic_id", "measure", "value"} object a line (autojudge-evaluate\'s .eval.jsonl)',
}
ONE_RUN_LAYOUTS = ("trec_eval",)


class ScoreFileRefused(ValueError):
    """A score file that cannot be written as asked (a one-run layout of many runs, an unknown run)."""


@dataclass(frozen=True)
class ScoreFile:
    """How a score table is written: its layout, run-id form, zero rows, and the run of a one-run layout."""

    layout: str = "tsv"
    team_prefix: bool = False
    zero_rows: bool = False
    run: str = ""

    def file_name(self, base: str) -> str:
        """`base` with what the file holds: `scores.auto_edit.manual.tot.zeros.txt`."""
        parts = [base]
        if self.run:
            parts.append(self.run)
        if self.layout != "tsv":
            parts.append(self.layout)
        if self.zero_rows:
            parts.append("zeros")
        return ".".join(parts) + {"tsv": ".tsv", "jsonl": ".jsonl"}.get(self.layout, ".txt")


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


def _topic_values(scores: Scores, run: str, *, zero_rows: bool) -> Iterator[tuple[str, Mapping[str, float]]]:
    """(topic as published, metric -> value) of the run's evaluated topics; a topic it did not answer as zeros if
    asked."""
    zeros = dict.fromkeys(scores.metrics, 0.0)
    for topic in scores.topics:
        values = scores.per_topic.get((run, topic))
        if values is not None:
            yield published_id(topic), values
        elif zero_rows:
            yield published_id(topic), zeros


def tot_lines(scores: Scores, *, published: Mapping[str, str] | None = None, zero_rows: bool = False) -> Iterator[str]:
    """`run<TAB>measure<TAB>topic<TAB>value` rows: per run and metric, each topic, then `all` (the mean)."""
    for run in scores.runs:
        name = run_display(run, published)
        rows = list(_topic_values(scores, run, zero_rows=zero_rows))
        for metric in scores.metrics:
            for topic, values in rows:
                yield f"{name}\t{metric}\t{topic}\t{score_value(values[metric])}\n"
            yield f"{name}\t{metric}\t{ALL_TOPICS}\t{score_value(scores.run_means[run][metric])}\n"


def _run_topic_lines(
    scores: Scores, *, published: Mapping[str, str] | None, zero_rows: bool
) -> Iterator[tuple[str, str, str, float]]:
    """(run, topic, metric, value): per run, each topic's metrics, then the run's means under `all`."""
    for run in scores.runs:
        name = run_display(run, published)
        for topic, values in _topic_values(scores, run, zero_rows=zero_rows):
            for metric in scores.metrics:
                yield name, topic, metric, values[metric]
        for metric in scores.metrics:
            yield name, ALL_TOPICS, metric, scores.run_means[run][metric]


def tsv_lines(scores: Scores, *, published: Mapping[str, str] | None = None, zero_rows: bool = False) -> Iterator[str]:
    """`run_id<TAB>topic_id<TAB>metric<TAB>value` with a header, run by run, then its `all` rows."""
    yield SCORES_HEADER
    for name, topic, metric, value in _run_topic_lines(scores, published=published, zero_rows=zero_rows):
        yield f"{name}\t{topic}\t{metric}\t{score_value(value)}\n"


def ir_measures_lines(
    scores: Scores, *, published: Mapping[str, str] | None = None, zero_rows: bool = False
) -> Iterator[str]:
    """`run<TAB>topic<TAB>measure<TAB>value`, no header, in the order of the TSV."""
    for name, topic, metric, value in _run_topic_lines(scores, published=published, zero_rows=zero_rows):
        yield f"{name}\t{topic}\t{metric}\t{score_value(value)}\n"


def rag4reports_lines(
    scores: Scores, *, published: Mapping[str, str] | None = None, zero_rows: bool = False
) -> Iterator[str]:
    """`topic<TAB>run<TAB>measure<TAB>value`, no header, in the order of the TSV."""
    for name, topic, metric, value in _run_topic_lines(scores, published=published, zero_rows=zero_rows):
        yield f"{topic}\t{name}\t{metric}\t{score_value(value)}\n"


def jsonl_lines(
    scores: Scores, *, published: Mapping[str, str] | None = None, zero_rows: bool = False
) -> Iterator[str]:
    """One JSON object a row, in the order of the TSV, as autojudge-evaluate writes them (json.dumps' defaults)."""
    for name, topic, metric, value in _run_topic_lines(scores, published=published, zero_rows=zero_rows):
        yield json.dumps({"run_id": name, "topic_id": topic, "measure": metric, "value": float(value)}) + "\n"


def trec_eval_lines(
    scores: Scores, *, run: str, published: Mapping[str, str] | None = None, zero_rows: bool = False
) -> Iterator[str]:
    """One run as `trec_eval -q` prints it: `measure<TAB>topic<TAB>value` per topic, then `runid all NAME` and
    the means under `all`."""
    for topic, values in _topic_values(scores, run, zero_rows=zero_rows):
        for metric in scores.metrics:
            yield f"{metric}\t{topic}\t{score_value(values[metric])}\n"
    yield f"runid\t{ALL_TOPICS}\t{run_display(run, published)}\n"
    for metric in scores.metrics:
        yield f"{metric}\t{ALL_TOPICS}\t{score_value(scores.run_means[run][metric])}\n"


def _one_run(scores: Scores, asked: str, published: Mapping[str, str]) -> str:
    """The stored id of the run a one-run file is asked for (by its stored or its team-prefixed id)."""
    if not asked:
        if len(scores.runs) == 1:
            return scores.runs[0]
        raise ScoreFileRefused(
            f"the trec_eval layout holds one run and these scores have {len(scores.runs)}: name one "
            "(--run RUN, or run= on a download), or write all of them in the tot or ir_measures layout"
        )
    for run in scores.runs:
        if asked in (run, published.get(run)):
            return run
    raise ScoreFileRefused(f"no run {asked!r} in these scores; runs: {', '.join(scores.runs) or 'none'}")


def score_table_lines(scores: Scores, file: ScoreFile = ScoreFile()) -> Iterator[str]:
    """A score table written as `file` says (its layout, run-id form, zero rows, run)."""
    # A one-run file's run may be asked for by its team-prefixed id, which only the stored runs know.
    published = run_published_ids() if file.team_prefix or (file.run and file.run not in scores.runs) else {}
    shown = published if file.team_prefix else None
    if file.layout == "tsv":
        return tsv_lines(scores, published=shown, zero_rows=file.zero_rows)
    if file.layout == "tot":
        return tot_lines(scores, published=shown, zero_rows=file.zero_rows)
    if file.layout == "ir_measures":
        return ir_measures_lines(scores, published=shown, zero_rows=file.zero_rows)
    if file.layout == "rag4reports":
        return rag4reports_lines(scores, published=shown, zero_rows=file.zero_rows)
    if file.layout == "jsonl":
        return jsonl_lines(scores, published=shown, zero_rows=file.zero_rows)
    if file.layout == "trec_eval":
        run = _one_run(scores, file.run, published)
        return trec_eval_lines(scores, run=run, published=shown, zero_rows=file.zero_rows)
    raise ScoreFileRefused(f"unknown layout {file.layout!r}: {', '.join(LAYOUTS)}")


def rows_policy(scores: Scores, file: ScoreFile) -> str:
    """What the file's rows hold for a topic a run did not answer: the line an export prints about it."""
    missing = sum(1 for run in scores.runs for topic in scores.topics if (run, topic) not in scores.per_topic)
    if not missing:
        return f"every run has a row for each of the {len(scores.topics)} evaluated topics"
    if file.zero_rows:
        return f"{missing} topic rows of runs that did not answer them are written as 0 (they count 0 in `all`)"
    return (
        f"{missing} topic rows of runs that did not answer them are left out; they count 0 in the `all` means "
        "(--zero-rows, or zeros=1 on a download, writes them, so that means recomputed from the rows agree)"
    )


def score_file_query(request) -> ScoreFile:
    """A download's file: `?format=` (a layout, else tsv), `&team_prefix=1`, `&zeros=1`, `&run=` (trec_eval)."""
    layout = request.GET.get("format", "tsv")
    return ScoreFile(
        layout=layout if layout in LAYOUTS else "tsv",
        team_prefix=team_prefix_query(request),
        zero_rows=request.GET.get("zeros", "") not in ("", "0"),
        run=request.GET.get("run", "").strip(),
    )


def team_prefix_query(request) -> bool:
    """A download asks for run ids with their team prefix (`?team_prefix=1`)."""
    return request.GET.get("team_prefix", "") not in ("", "0")
