"""A score table in the AutoJudge tools' JSONL layout (autojudge-evaluate's `jsonl`): one object a row,
`{"run_id", "topic_id", "measure", "value"}`, each run's topics then its means under the topic `all`.

The collection writes the other layouts (assessor.collection.score_formats); the JSONL rows are its
`ir_measures` rows, so that the run ids, the zero rows and the `all` rows are the same in every layout.
"""

import json
from collections.abc import Iterator
from dataclasses import replace

from assessor.collection.score_formats import ScoreFile, score_table_lines
from assessor.scoring.scores import Scores


def jsonl_lines(scores: Scores, file: ScoreFile) -> Iterator[str]:
    for line in score_table_lines(scores, replace(file, layout="ir_measures", run="")):
        run_id, topic_id, measure, value = line.rstrip("\n").split("\t")
        yield json.dumps({"run_id": run_id, "topic_id": topic_id, "measure": measure, "value": float(value)}) + "\n"


def jsonl_file_name(base: str, file: ScoreFile) -> str:
    return f"{base}{'.zeros' if file.zero_rows else ''}.jsonl"
