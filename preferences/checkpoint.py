"""PrefNugget's preference checkpoint (`<name>.preferences.jsonl`), both ways.

The reference writes its first phase as JSONL: one `"_type": "comparison"` record per judged pair and its
flipped copy (`run_id`, `run_id2`, `query_id`, the request's texts, `passage_1`, `passage_2`,
`better_passage` 1 or 2, `confidence`, `reasoning`), ties and unreadable answers left out, then one
`"_type": "aggregate"` record per report (`run_id`, `topic_id`, `borda_score`, `win_frac`, `better_than`,
`worse_than`). A checkpoint this app writes the reference loads to go on with its banks; one the
reference wrote imports here as a file's preference source: a pair and its flipped copy are one
preference, in the orientation first written; aggregates are read back from the preferences, not imported.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from assessor.collection.runs import AmbiguousRun, run_aliases, run_match
from assessor.importing.base import (
    MAX_ID_CHARS,
    MAX_TOPIC_ID_CHARS,
    ImportFailure,
    ImportResult,
    integer_checked,
    optional_float,
    read_jsonl,
    required_json_id,
)
from assessor.importing.pipeline import Changes, LabelsImport
from assessor.importing.topic_ids import FileTopicIds
from assessor.models import Answer
from assessor.models.keys import published_id
from assessor.scoring.lifecycle import labels_counted
from assessor.sources import import_source_claim
from preferences.borda import flipped, standings
from preferences.kinds import IMPORT_PREFERENCES, PREFERENCES_FAMILY
from preferences.models import PreferenceLabel
from preferences.scoring import SCORE_FAMILY
from reports.texts import request_texts


@dataclass(frozen=True)
class Comparison:
    line: int
    topic_id: str  # the topic's stored key (the file's query_id in the campaign in effect)
    run_id: str  # passage 1
    run_id2: str
    label: int
    confidence: float | None
    reasoning: str


def _comparison(record: dict[str, Any], ids: FileTopicIds, *, path: Path, line: int) -> Comparison:
    # 1 or 2 as the reference writes them; 0 (a tie) from a checkpoint that kept ties.
    label = integer_checked(record.get("better_passage"), 0, 2, path=path, line=line, field="better_passage")
    reasoning = record.get("reasoning") or ""
    if not isinstance(reasoning, str):
        raise ImportFailure("must be a string", path=path, line=line, field="reasoning")
    return Comparison(
        line=line,
        topic_id=ids.key(
            required_json_id(record, "query_id", MAX_TOPIC_ID_CHARS, path=path, line=line, whole_numbers=True),
            path=path,
            line=line,
            field="query_id",
        ),
        run_id=required_json_id(record, "run_id", MAX_ID_CHARS, path=path, line=line),
        run_id2=required_json_id(record, "run_id2", MAX_ID_CHARS, path=path, line=line),
        label=label,
        confidence=optional_float(record, "confidence", path=path, line=line),
        reasoning=reasoning,
    )


def checkpoint_parse(path: Path) -> Iterator[Comparison]:
    """The comparison records of a checkpoint, checked; aggregate records are skipped, other types refused. Each
    `query_id` is read as its topic's stored key in the campaign in effect."""
    ids = FileTopicIds()
    for line, record in read_jsonl(path):
        kind = record.get("_type")
        if kind == "aggregate":
            continue
        if kind != "comparison":
            raise ImportFailure(f"expected comparison or aggregate, not {kind!r}", path=path, line=line, field="_type")
        comparison = _comparison(record, ids, path=path, line=line)
        if comparison.run_id == comparison.run_id2:
            raise ImportFailure("a report compared with itself", path=path, line=line, field="run_id2")
        yield comparison


def preferences_import(*, path: Path, name: str, replace: bool = False, user: User | None = None) -> ImportResult:
    """The registry's `Importer.function` (the upload page and `import_preferences`)."""
    return PreferencesImport(path=path, name=name, replace=replace, user=user).run()


def _answer_ids(comparisons: list[Comparison]) -> dict[tuple[str, str], int]:
    """(stored run id, topic id) -> answer id for the reports the file names."""
    topics = {c.topic_id for c in comparisons}
    return {
        (run_id, topic_id): pk
        for pk, run_id, topic_id in Answer.objects.filter(topic_id__in=topics).values_list(
            "pk", "run__run_id", "topic_id"
        )
    }


def _stored_run(run_id: str, runs: set[str], aliases: dict[str, str], *, path: Path, line: int, field: str) -> str:
    try:
        stored = run_match(run_id, runs, aliases)
    except AmbiguousRun as exc:
        raise ImportFailure(str(exc), path=path, line=line, field=field) from None
    if stored is None:
        raise ImportFailure(f"unknown run {run_id!r} (import its reports first)", path=path, line=line, field=field)
    return stored


Pair = tuple[int, int]  # (answer of passage 1, answer of passage 2), as the line has them


class PreferencesImport(LabelsImport[Comparison, Pair, PreferenceLabel, ImportResult]):
    """One preference a pair of reports: a pair and its flipped copy are one, in the orientation first written."""

    kind = IMPORT_PREFERENCES
    chunk_size = None

    def __init__(self, *, name: str, **common: Any) -> None:
        super().__init__(**common)
        self.name = name
        self.seen: dict[frozenset[int], tuple[Pair, Comparison]] = {}

    def options(self) -> dict[str, Any]:
        return {"name": self.name, "replace": self.replace}

    def start(self) -> None:
        if not self.name:
            raise ImportFailure("a preference source name is required", path=self.path, field="name")

    def parse(self) -> Iterator[Comparison]:
        return checkpoint_parse(self.path)

    def chunk_prepare(self, chunk: list[Comparison]) -> None:
        if not chunk:
            raise ImportFailure(
                'holds no preferences (no "_type": "comparison" line), only aggregates, which are computed from '
                "the preferences and not imported: nothing to import",
                path=self.path,
            )
        self.source_id = import_source_claim(
            writes=self.writes, family=PREFERENCES_FAMILY, name=self.name, user=self.user, path=self.path,
            option="name",
        )  # fmt: skip
        self.answers = _answer_ids(chunk)
        self.runs = {run_id for run_id, _ in self.answers}
        self.aliases = run_aliases()
        self.stored = {
            (label.first_id, label.second_id): label
            for label in PreferenceLabel.objects.filter(source_id=self.source_id)
        }
        self.topics = {c.topic_id for c in chunk}

    def resolve(self, line: Comparison) -> Pair:
        first_run = _stored_run(line.run_id, self.runs, self.aliases, path=self.path, line=line.line, field="run_id")
        second_run = _stored_run(line.run_id2, self.runs, self.aliases, path=self.path, line=line.line, field="run_id2")
        first = self.answers.get((first_run, line.topic_id))
        second = self.answers.get((second_run, line.topic_id))
        if first is None or second is None:
            missing = line.run_id if first is None else line.run_id2
            raise ImportFailure(
                f"no report of run {missing!r} for topic {published_id(line.topic_id)!r}", path=self.path, line=line.line,
                field="run_id" if first is None else "run_id2",
            )  # fmt: skip
        return first, second

    def compare(self, changes: Changes[Pair, Comparison, PreferenceLabel], key: Pair, line: Comparison) -> None:
        pair = frozenset(key)
        if pair not in self.seen:
            self.seen[pair] = (key, line)
            super().compare(changes, key, line)
            return
        # The flipped copy (or the pair again): it must say the same, turned round where it is.
        (kept_first, _), kept = self.seen[pair]
        said = line.label if key[0] == kept_first else flipped(line.label)
        if said != kept.label:
            raise ImportFailure(
                f"this pair's preference contradicts line {kept.line}", path=self.path, line=line.line,
                field="better_passage",
            )  # fmt: skip
        self.result.unchanged += 1

    def existing(self, key: Pair) -> PreferenceLabel | None:
        return self.stored.get(key) or self.stored.get((key[1], key[0]))

    def _value(self, stored: PreferenceLabel, line: Comparison) -> int | None:
        """The line's label in the stored pair's orientation."""
        first = self.seen[frozenset((stored.first_id, stored.second_id))][0][0]
        return line.label if stored.first_id == first else flipped(line.label)

    def same(self, stored: PreferenceLabel, line: Comparison) -> bool:
        return stored.label == self._value(stored, line)

    def conflict(self, stored: PreferenceLabel, line: Comparison) -> ImportFailure:
        return ImportFailure(
            f"{self.name!r} holds another preference for this pair; import with replace to change it",
            path=self.path,
            line=line.line,
            field="better_passage",
        )

    def write(self, changes: Changes[Pair, Comparison, PreferenceLabel]) -> None:
        for label, line in changes.changed.values():
            label.label, label.imported_from = self._value(label, line), self.batch
        self.writes.update(changes.changed_rows(), ["label", "imported_from"])
        self.writes.create(
            PreferenceLabel(
                source_id=self.source_id, topic_id=line.topic_id, first_id=first, second_id=second, label=line.label,
                confidence=line.confidence, reasoning=line.reasoning, imported_from=self.batch,
            )
            for (first, second), line in changes.new.items()
        )  # fmt: skip
        self.writes.scores_touch(family=SCORE_FAMILY, columns=(self.name,), topics=self.topics)


def checkpoint_lines(*, name: str) -> Iterator[str]:
    """A preference source's counted preferences as PrefNugget's checkpoint: each decided pair and its flipped
    copy (ties and unreadable answers left out, as the reference keeps them), then the aggregates."""
    labels = labels_counted(PreferenceLabel.objects.filter(source__family=PREFERENCES_FAMILY, source__name=name))
    rows = list(
        labels.order_by("topic_id", "first__run__run_id", "second__run__run_id").values_list(
            "topic_id", "first_id", "second_id", "first__run__run_id", "second__run__run_id", "label", "confidence",
            "reasoning",
        )
    )  # fmt: skip
    if not rows:
        raise LookupError(f"no counted preferences under {name!r}")
    topics = sorted({row[0] for row in rows})
    requests = request_texts(topics)
    texts = dict(Answer.objects.filter(topic_id__in=topics).values_list("pk", "text"))
    records = []
    for topic_id, first, second, first_run, second_run, label, confidence, reasoning in rows:
        if label not in (1, 2):
            continue  # a tie or an unreadable answer: the reference keeps neither
        request = requests[topic_id]
        common = {
            "query_id": published_id(topic_id),
            "query_title": request.title,
            "query_problem": request.problem_statement,
            "query_background": request.background,
            "confidence": confidence,
            "reasoning": reasoning,
        }
        records.append((first_run, second_run, texts[first], texts[second], label, common))
    turned = [(b, a, tb, ta, flipped(label), common) for a, b, ta, tb, label, common in records]
    for run_id, run_id2, passage_1, passage_2, label, common in records + turned:
        record = {"run_id": run_id, "run_id2": run_id2, **common, "passage_1": passage_1, "passage_2": passage_2}
        record["better_passage"] = label
        yield json.dumps({**_ordered(record), "_type": "comparison"}) + "\n"
    table = standings((row[0], row[3], row[4], row[5]) for row in rows)
    # As the reference orders them: by the string "run id:topic id" of the published ids.
    ordered = sorted(table.items(), key=lambda item: f"{item[0][1]}:{published_id(item[0][0])}")
    for (topic_id, run_id), standing in ordered:
        decided_count = standing.wins + standing.losses
        aggregate = {
            "run_id": run_id,
            "topic_id": published_id(topic_id),
            "borda_score": standing.borda,
            "win_frac": standing.borda / decided_count if decided_count else 0.0,
            "better_than": standing.beat,
            "worse_than": standing.lost_to,
            "_type": "aggregate",
        }
        yield json.dumps(aggregate) + "\n"


def _ordered(record: dict[str, Any]) -> dict[str, Any]:
    """The fields in the order the reference's model writes them."""
    order = (
        "run_id", "run_id2", "query_id", "query_title", "query_problem", "query_background", "passage_1",
        "passage_2", "better_passage", "confidence", "reasoning",
    )  # fmt: skip
    return {key: record[key] for key in order}
