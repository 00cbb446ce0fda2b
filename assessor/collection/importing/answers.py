"""What the judgment importers share: finding or making the runs, topics and answers a file names.

Nugget assignment files and support files both name answers by (run id, topic
id), and either may come first, or after the run file itself. Runs are matched
by `assessor.collection.runs` (team-prefix rule), answers by (run, topic); the helpers
here do it a chunk of lines at a time, with a few queries per chunk.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from django.db.models import Model, QuerySet
from django.utils import timezone

from assessor.collection.runs import AmbiguousRun, RunResolver
from assessor.importing.base import (
    LOOKUP_BATCH,
    MAX_TOPIC_ID_CHARS,
    ImportFailure,
    ImportResult,
    Writes,
    in_batches,
    json_id,
    limited,
)
from assessor.importing.pipeline import RecordImport
from assessor.models import Answer, Run, Topic
from assessor.models.keys import published_id
from assessor.names import name_problem

T = TypeVar("T")
# Below every database's limit on query parameters (SQLite's conservative 999 included).
# Enough examples of one kind of warning to act on; the rest are counted.
WARNINGS_PER_KIND = 10

AnswerKey = tuple[int, str]  # (run pk, topic's stored key)


@dataclass
class JudgmentsImportResult(ImportResult):
    """An ImportResult that also says what kinds of rows were made.

    `created` counts every row made (runs, answers, labels...), so that a file
    that made anything keeps its ImportBatch; `unchanged` and `replaced`
    count the file's main records (labels, or nugget sets).
    """

    made: Counter = field(default_factory=Counter)
    _warning_kinds: Counter = field(default_factory=Counter, repr=False)

    def count_made(self, what: str, number: int = 1) -> None:
        if number:
            self.made[what] += number
            self.created += number

    def warn(self, kind: str, message: str) -> None:
        """Keep the first few warnings of each kind; count the others."""
        self._warning_kinds[kind] += 1
        if self._warning_kinds[kind] <= WARNINGS_PER_KIND:
            self.warnings.append(message)

    def warnings_close(self) -> None:
        for kind, number in self._warning_kinds.items():
            if number > WARNINGS_PER_KIND:
                self.warnings.append(f"... and {number - WARNINGS_PER_KIND} more warnings like these ({kind})")

    def summary(self) -> str:
        text = super().summary()
        if self.made:
            text += " (made: " + ", ".join(f"{number} {what}" for what, number in self.made.items()) + ")"
        return text


def same_modulo_whitespace(a: str, b: str) -> bool:
    return a.split() == b.split()


def sentences_fit(text: str, sentences: Sequence[str | None]) -> list[str] | None:
    """Split a stored answer text into the given sentences, modulo whitespace; None if they do not fit.

    A sentence given as None (its text lost) takes the words between its
    neighbours, so the stored text gives it back.
    """
    words = text.split()
    fitted: list[str] = []
    position = 0
    for index, sentence in enumerate(sentences):
        if sentence is not None:
            expected = sentence.split()
            if words[position : position + len(expected)] != expected:
                return None
            fitted.append(sentence)
            position += len(expected)
            continue
        following = next((s.split() for s in sentences[index + 1 :] if s is not None and s.split()), None)
        end = len(words) if following is None else _find(words, following, position)
        if end is None:
            return None
        fitted.append(" ".join(words[position:end]))
        position = end
    return fitted if position == len(words) else None


def _find(words: list[str], part: list[str], start: int) -> int | None:
    for position in range(start, len(words) - len(part) + 1):
        if words[position : position + len(part)] == part:
            return position
    return None


def words_count(text: str) -> int:
    return len(text.split())


def text_field(
    record: dict[str, Any], key: str, *, limit: int, path: Path, line: int, where: str = "", strip: bool = True
) -> str:
    """A required, non-empty string field of at most `limit` characters, stripped unless `strip` is False
    (a text kept as the file has it, such as a nugget's: NIST's carry trailing spaces that exports give back)."""
    name = f"{where}.{key}" if where else key
    if key not in record:
        raise ImportFailure("missing", path=path, line=line, field=name)
    value = record[key]
    if not isinstance(value, str):
        raise ImportFailure(f"expected a string, got {json_type(value)}", path=path, line=line, field=name)
    if not value.strip():
        raise ImportFailure("empty", path=path, line=line, field=name)
    return limited(value.strip() if strip else value, limit, path=path, line=line, field=name)


def id_field(record: dict[str, Any], keys: Sequence[str], *, path: Path, line: int) -> str:
    """A topic id under the first of `keys` present, as written; integers are accepted (some tools write qids as
    numbers)."""
    key = next((key for key in keys if key in record), None)
    if key is None:
        raise ImportFailure("missing", path=path, line=line, field=keys[0])
    return json_id(record[key], MAX_TOPIC_ID_CHARS, path=path, line=line, field=key, whole_numbers=True)


def json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    if isinstance(value, float) and value != value:
        return "NaN"
    return names.get(type(value), type(value).__name__)


def slug_check(name: str, *, option: str, path: Path) -> None:
    """Names of nugget sets, banks, assigners and methods follow the rule of every name (assessor.names)."""
    if problem := name_problem(name):
        raise ImportFailure(f"{option}: {problem}", path=path)


def maker_kind_check(labels: QuerySet, *, kind_field: str, kind: str, held: str, option: str, path: Path) -> None:
    """The labels of one name are of one kind of maker (`kind_field`): a file of another kind is refused under it."""
    other_kind = labels.exclude(**{kind_field: kind}).values_list(kind_field, flat=True).first()
    if other_kind:
        raise ImportFailure(f"{held} already holds {other_kind} labels; give these another {option}", path=path)


def topics_require(lines: Iterable[tuple[int, str]], *, path: Path, field: str) -> None:
    """Every (line, topic key) names a stored topic of the campaign, else an error at the first line that does not
    (naming the topic as the file does)."""
    lines = list(lines)
    known: set[str] = set()
    for batch in in_batches({topic_id for _, topic_id in lines}):
        known.update(Topic.objects.filter(id__in=batch).values_list("id", flat=True))
    for number, topic_id in lines:
        if topic_id not in known:
            raise ImportFailure(
                f"unknown topic {published_id(topic_id)} (import the topics first)", path=path, line=number, field=field
            )


class RunsFinder:
    """The runs a file names, matched by the team-prefix rule, made when missing."""

    def __init__(self, *, writes: Writes, result: JudgmentsImportResult, path: Path) -> None:
        self.resolver = RunResolver(writes)
        self.batch = writes.batch
        self.result = result
        self.path = path
        self.made: list[tuple[str, int]] = []  # (run id, line) of each run the file made

    def run(self, run_id: str, *, line: int) -> Run:
        try:
            run, created = self.resolver.get_or_create(run_id, imported_from=self.batch)
        except AmbiguousRun as exc:
            raise ImportFailure(str(exc), path=self.path, line=line, field="run_id") from None
        if created:
            self.result.count_made("runs")
            self.made.append((run.run_id, line))
        return run


class AnswerKeys:
    """Catches a second line for one (run, topic) in a file, whatever run id spelling it uses."""

    def __init__(self, *, path: Path) -> None:
        self.path = path
        self.first_line: dict[AnswerKey, int] = {}

    def claim(self, key: AnswerKey, *, run_id: str, line: int, field: str) -> None:
        first = self.first_line.setdefault(key, line)
        if first != line:
            raise ImportFailure(
                f"a second answer of run {run_id} for topic {published_id(key[1])} (first on line {first})",
                path=self.path,
                line=line,
                field=field,
            )


def answers_stored(keys: Iterable[AnswerKey]) -> dict[AnswerKey, Answer]:
    """The stored answers of (run pk, topic id) pairs.

    One query over runs x topics of the chunk: files are sorted by run or by
    topic, so that product is close to the pairs asked for.
    """
    keys = set(keys)
    if not keys:
        return {}
    run_pks = {run_pk for run_pk, _ in keys}
    topic_ids = {topic_id for _, topic_id in keys}
    found: dict[AnswerKey, Answer] = {}
    for runs in in_batches(sorted(run_pks), LOOKUP_BATCH // 2):
        for topics in in_batches(sorted(topic_ids), LOOKUP_BATCH // 2):
            for answer in Answer.objects.filter(run_id__in=runs, topic_id__in=topics).only(
                "id", "run_id", "topic_id", "text", "words"
            ):
                key = (answer.run_id, answer.topic_id)
                if key in keys:
                    found[key] = answer
    return found


# --- the shape of a judgment import -----------------------------------------------------------


class JudgedLine(Protocol):
    """A parsed line of a judgment file: which answer it is about, and where it stands."""

    @property
    def line(self) -> int: ...

    @property
    def run_id(self) -> str: ...

    @property
    def topic_id(self) -> str: ...


Line = TypeVar("Line", bound=JudgedLine)
L = TypeVar("L", bound=Model)


class JudgmentsImport(RecordImport[Line, AnswerKey, Answer, JudgmentsImportResult]):
    """One judgment file's import, a chunk of lines at a time: what every kind of judgment file does.

    A subclass imports a chunk (`chunk_import`): it keys the chunk's lines to
    their answers (`keyed`), makes the answers the runs lack (`answers_made`),
    writes its labels, and names the source and topics it wrote
    (`Writes.scores_touch`).
    """

    def result_new(self) -> JudgmentsImportResult:
        return JudgmentsImportResult(path=str(self.path))

    def start(self) -> None:
        self.now = timezone.now()
        self.runs = RunsFinder(writes=self.writes, result=self.result, path=self.path)
        self.keys = AnswerKeys(path=self.path)

    def finish(self) -> None:
        self.result.warnings_close()

    def chunk_import(self, chunk: list[Line]) -> None:
        raise NotImplementedError

    def labels_replaced(self, model: type[L], changed: list[tuple[int, Any]]) -> None:
        """Stored labels (id, new label) the file now makes, updated: the file is their one maker, as Provenance
        requires, and they date from this import."""
        rows = [
            model(
                id=label_id, label=label, imported_from=self.batch, created_by=None, job=None, seconds_spent=None,
                created_at=self.now,
            )
            for label_id, label in changed
        ]  # fmt: skip
        self.writes.update(rows, ["label", "imported_from", "created_by", "job", "seconds_spent", "created_at"])
        self.result.replaced += len(rows)

    def answers_keyed(self, chunk: list[Line], *, topic_field: str) -> list[tuple[AnswerKey, Line]]:
        """Each line with its answer's key: its topic stored, its run found or made, no answer named twice."""
        self.result.lines += len(chunk)
        topics_require(((line.line, line.topic_id) for line in chunk), path=self.path, field=topic_field)
        keyed: list[tuple[AnswerKey, Line]] = []
        for line in chunk:
            key = (self.runs.run(line.run_id, line=line.line).pk, line.topic_id)
            self.keys.claim(key, run_id=line.run_id, line=line.line, field="run_id")
            keyed.append((key, line))
        return keyed

    def answers_made(
        self, keyed: list[tuple[AnswerKey, Line]], *, text: Callable[[Line], str]
    ) -> tuple[dict[AnswerKey, Answer], dict[AnswerKey, Answer]]:
        """(every line's answer, those made now): an answer a run lacks is made from the line's text."""
        stored = answers_stored(key for key, _ in keyed)
        made = {
            key: Answer(
                run_id=key[0],
                topic_id=line.topic_id,
                text=text(line),
                words=words_count(text(line)),
                imported_from=self.batch,
                created_at=self.now,
            )
            for key, line in keyed
            if key not in stored
        }
        self.writes.create(made.values())
        self.result.count_made("answers", len(made))
        return {**stored, **made}, made
