"""Nugget assignment files: one judged answer a line, with its topic's nuggets and their labels.

`{"qid", "query", "run_id", "answer_text", "response_length"?,
  "nuggets": [{"text", "importance": "vital"|"okay", "assignment": "support"|"partial_support"|"not_support"}]}`

The format of NIST's TREC 2024 RAG file and of the nuggetizer tool's assigned
output. The nuggets repeat on every answer of a topic; they become the topic's
nugget set of the given name (made once), and the answers' labels become
AssignmentLabels of the given assigner. Topics are joined on `qid` only: the
`query` of these files is normalized and differs from the topics file.

A file of one run's answers is imported with `run_id=`, the run it belongs to.
nuggetizer's batch assigner writes one such file per run, with `run_id` in every
record set to its *answer file's* name (`answers`): with `run_id=` the records'
own `run_id` is only the file's name for its run (said in a warning when it is
another), and every record must carry the same one.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import connection

from assessor.collection.importing.answers import (
    AnswerKey,
    JudgmentsImport,
    JudgmentsImportResult,
    id_field,
    json_type,
    maker_kind_check,
    same_modulo_whitespace,
    slug_check,
    text_field,
)
from assessor.collection.runs import run_ids_match
from assessor.importing.base import (
    MAX_ANSWER_CHARS,
    MAX_ID_CHARS,
    MAX_NUGGET_CHARS,
    ImportFailure,
    Writes,
    id_checked,
    in_batches,
    limited,
    option_id_checked,
    read_jsonl,
    require,
)
from assessor.importing.topic_ids import FileTopicIds
from assessor.models.keys import published_id
from assessor.sources import import_source_claim
from assignment.kinds import IMPORT_ASSIGNMENTS, LABEL_FAMILY
from assignment.models import AssignmentLabel
from nuggets import kinds as nugget_kinds
from nuggets.importing import replaced_nuggets_announce, replaced_nuggets_retire
from nuggets.models import Nugget, NuggetSet

NUGGET_KINDS = (NuggetSet.Kind.MANUAL, NuggetSet.Kind.AUTO_EDIT, NuggetSet.Kind.AUTO)
IMPORTANCES = frozenset(Nugget.Importance.values)
LABELS = frozenset(AssignmentLabel.Label.values)
# One line carries a topic's nuggets (20 at most): a thousand lines are ~20,000 labels.
CHUNK_ANSWERS = 1000
SCORE_FAMILY = "conditions"  # the score family of the conditions (assignment.parts)
# Labels are written as plain rows (see rows_insert): bulk_create would take minutes at benchmark scale.
LABEL_COLUMNS = ("answer", "nugget", "assigner", "assigner_kind", "source", "label", "imported_from", "created_at")

TOPIC_FIELDS = ("qid", "topic_id")
NuggetList = tuple[tuple[str, str], ...]  # ((text, importance), ...) in file order


@dataclass(frozen=True)
class AssignedAnswer:
    line: int
    topic_id: str
    run_id: str
    answer_text: str
    nuggets: NuggetList
    labels: tuple[str, ...]
    # With --run-id: the run id the record itself carries, where it names the run otherwise (nuggetizer's
    # batch assigner writes its answer file's name there); "" when it agrees or is absent.
    named_as: str = ""


def _parse_nugget(raw: Any, index: int, *, path: Path, line: int) -> tuple[str, str, str]:
    where = f"nuggets[{index}]"
    if not isinstance(raw, dict):
        raise ImportFailure(f"expected an object, got {json_type(raw)}", path=path, line=line, field=where)
    text = text_field(raw, "text", limit=MAX_NUGGET_CHARS, path=path, line=line, where=where, strip=False)
    importance = raw.get("importance")
    if importance not in IMPORTANCES:
        raise ImportFailure(
            f"{importance!r} is not an importance (vital or okay)", path=path, line=line, field=f"{where}.importance"
        )
    label = raw.get("assignment")
    if label not in LABELS:
        raise ImportFailure(
            f"{label!r} is not a label (support, partial_support or not_support)",
            path=path,
            line=line,
            field=f"{where}.assignment",
        )
    return text, importance, label


def _parse_answer(
    record: dict[str, Any], *, path: Path, line: int, topic_ids: FileTopicIds, run_id: str | None = None
) -> AssignedAnswer:
    """One line's answer, its topic as the stored key in the campaign in effect."""
    topic_id = id_field(record, TOPIC_FIELDS, path=path, line=line)
    topic_id = topic_ids.record_key(record, TOPIC_FIELDS, topic_id, path=path, line=line)
    named = ""
    if record.get("run_id") is not None or run_id is None:
        if record.get("run_id") is None:
            raise ImportFailure(
                "missing: a file without run ids needs --run-id, the run its answers belong to",
                path=path,
                line=line,
                field="run_id",
            )
        named = id_checked(
            text_field(record, "run_id", limit=MAX_ID_CHARS, path=path, line=line, strip=False),
            MAX_ID_CHARS,
            path=path,
            line=line,
            field="run_id",
        )
    if run_id is None:
        run_id, named = named, ""
    elif run_ids_match(named, run_id):
        named = ""
    answer_text = require(record, "answer_text", str, path=path, line=line)
    limited(answer_text, MAX_ANSWER_CHARS, path=path, line=line, field="answer_text")
    raw_nuggets = require(record, "nuggets", list, path=path, line=line)
    if not raw_nuggets:
        raise ImportFailure("no nuggets", path=path, line=line, field="nuggets")
    parsed = [_parse_nugget(raw, index, path=path, line=line) for index, raw in enumerate(raw_nuggets)]
    return AssignedAnswer(
        line=line,
        topic_id=topic_id,
        run_id=run_id,
        answer_text=answer_text,
        nuggets=tuple((text, importance) for text, importance, _ in parsed),
        labels=tuple(label for _, _, label in parsed),
        named_as=named,
    )


def nugget_list_difference(first: NuggetList, other: NuggetList) -> str:
    """The field where two nugget lists first differ, named as in the file."""
    for index, ((text, importance), (other_text, other_importance)) in enumerate(zip(first, other, strict=False)):
        if text != other_text:
            return f"nuggets[{index}].text"
        if importance != other_importance:
            return f"nuggets[{index}].importance"
    return "nuggets"


def _parse_answers(path: Path, *, run_id: str | None = None) -> Iterator[AssignedAnswer]:
    """The file's answers, checked to repeat one nugget list per topic."""
    lists: dict[str, tuple[NuggetList, int]] = {}
    named_first: tuple[str, int] | None = None  # with --run-id: what the file calls its run, and where
    topic_ids = FileTopicIds()
    for number, record in read_jsonl(path):
        answer = _parse_answer(record, path=path, line=number, topic_ids=topic_ids, run_id=run_id)
        if run_id is not None:
            named = answer.named_as or run_id
            named_first = named_first or (named, number)
            if not run_ids_match(named, named_first[0]):
                raise ImportFailure(
                    f"run {named!r} in a file whose line {named_first[1]} names run {named_first[0]!r}: "
                    f"--run-id imports one run's file, here as run {run_id!r}",
                    path=path,
                    line=number,
                    field="run_id",
                )
        first, first_line = lists.setdefault(answer.topic_id, (answer.nuggets, number))
        if answer.nuggets != first:
            where = nugget_list_difference(first, answer.nuggets)
            what = f"{len(answer.nuggets)} nuggets, not {len(first)}" if where == "nuggets" else "another nugget"
            raise ImportFailure(
                f"the nuggets of topic {published_id(answer.topic_id)} differ from those on line {first_line} ({what}); "
                "every answer of a topic carries the same list",
                path=path,
                line=number,
                field=where,
            )
        yield answer


def _nuggets_stored(set_ids: list[int]) -> dict[int, list[tuple[int, str, str]]]:
    """Each set's nuggets in order: (id, text, importance)."""
    lists: dict[int, list[tuple[int, str, str]]] = {set_id: [] for set_id in set_ids}
    for set_id, nugget_id, text, importance in (
        Nugget.objects.filter(nugget_set_id__in=set_ids)
        .order_by("nugget_set_id", "position")
        .values_list("nugget_set_id", "id", "text", "importance")
    ):
        lists[set_id].append((nugget_id, text, importance))
    return lists


class NuggetSets:
    """The nugget set of each topic under one name: found or made once, its nugget ids in order."""

    def __init__(
        self,
        *,
        kind: str,
        name: str,
        replace: bool,
        retire_labels: bool,
        writes: Writes,
        result: JudgmentsImportResult,
        path: Path,
        user: User | None,
    ) -> None:
        self.kind = kind
        self.name = name
        self.replace = replace
        self.retire_labels = retire_labels
        self.user = user
        self.replaced_sets: set[int] = set()
        self.writes = writes
        self.batch = writes.batch
        self.source = import_source_claim(
            writes=writes, family=nugget_kinds.LABEL_FAMILY, name=name, user=user, path=path, option="--nuggets-name"
        )
        self.result = result
        self.path = path
        self.nugget_ids: dict[str, list[int]] = {}

    def prepare(self, answers: list[AssignedAnswer]) -> None:
        """The nugget sets of the topics first seen in these answers: kept, made or (under --replace) refilled."""
        firsts: dict[str, AssignedAnswer] = {}
        for answer in answers:
            if answer.topic_id not in self.nugget_ids:
                firsts.setdefault(answer.topic_id, answer)
        if not firsts:
            return
        stored = {s.topic_id: s for s in NuggetSet.objects.filter(name=self.name, topic_id__in=list(firsts))}
        stored_lists = _nuggets_stored([s.pk for s in stored.values()])
        to_fill: list[tuple[NuggetSet, AssignedAnswer]] = []
        for topic_id, answer in firsts.items():
            nugget_set = stored.get(topic_id)
            if nugget_set is None:
                to_fill.append((self._made(topic_id), answer))
            elif self._kept(nugget_set, stored_lists[nugget_set.pk], answer):
                self.nugget_ids[topic_id] = [nugget_id for nugget_id, _, _ in stored_lists[nugget_set.pk]]
            else:
                self._clear(nugget_set, answer)
                to_fill.append((nugget_set, answer))
        self._fill(to_fill)
        for nugget_set, _ in to_fill:
            if nugget_set.pk in self.replaced_sets:
                self.writes.later(partial(replaced_nuggets_announce, nugget_set.pk, user=self.user))

    def _made(self, topic_id: str) -> NuggetSet:
        nugget_set = self.writes.create_one(
            NuggetSet(
                topic_id=topic_id, kind=self.kind, name=self.name, source_id=self.source, imported_from=self.batch
            )
        )
        self.result.count_made("nugget sets")
        return nugget_set

    def _kept(self, nugget_set: NuggetSet, nuggets: list[tuple[int, str, str]], answer: AssignedAnswer) -> bool:
        """Whether the stored set is the file's list; False where --replace lets the file's list replace it."""
        if nugget_set.form != NuggetSet.Form.FACTS:
            raise ImportFailure(
                f"topic {published_id(nugget_set.topic_id)} has a question bank named {self.name!r}: assignments label fact "
                "nuggets, choose another --nuggets-name",
                path=self.path,
                line=answer.line,
                field="nuggets",
            )
        stored_list = tuple((text, importance) for _, text, importance in nuggets)
        if stored_list == answer.nuggets and nugget_set.kind == self.kind:
            return True
        if self.replace:
            return False
        if nugget_set.kind != self.kind:
            problem, where = f"is stored as {nugget_set.kind} nuggets, not {self.kind}", "nuggets"
        else:
            problem, where = "is stored with another nugget list", nugget_list_difference(stored_list, answer.nuggets)
        raise ImportFailure(
            f"the nugget set {self.name!r} of topic {published_id(nugget_set.topic_id)} {problem}; use --replace to change it "
            "(or --nuggets-name for another set)",
            path=self.path,
            line=answer.line,
            field=where,
        )

    def _clear(self, nugget_set: NuggetSet, answer: AssignedAnswer) -> None:
        """Under --replace: the set takes the file's nuggets; the old ones go, the labels on them retired."""
        replaced_nuggets_retire(
            nugget_set, writes=self.writes, retire=self.retire_labels, result=self.result, path=self.path,
            line=answer.line, option="--retire-labels",
        )  # fmt: skip
        self.replaced_sets.add(nugget_set.pk)
        # Every condition over the set counts other nuggets in this topic now.
        self.writes.scores_touch_everywhere([nugget_set.topic_id])
        nugget_set.kind = self.kind
        nugget_set.imported_from, nugget_set.created_by, nugget_set.job = self.batch, None, None
        nugget_set.version += 1  # tabs showing the old list are told it changed
        self.writes.update([nugget_set], ["kind", "imported_from", "created_by", "job", "version"])
        self.result.replaced += 1

    def _fill(self, sets: list[tuple[NuggetSet, AssignedAnswer]]) -> None:
        nuggets = self.writes.create(
            Nugget(nugget_set=nugget_set, position=position, text=text, importance=importance, imported_from=self.batch)
            for nugget_set, answer in sets
            for position, (text, importance) in enumerate(answer.nuggets)
        )
        self.result.count_made("nuggets", len(nuggets))
        made = iter(nuggets)
        for nugget_set, answer in sets:
            self.nugget_ids[nugget_set.topic_id] = [next(made).pk for _ in answer.nuggets]
            if len(answer.nuggets) > NuggetSet.MAX_NUGGETS:
                self.result.warn(
                    "long nugget lists",
                    f"{self.path}, line {answer.line}: topic {published_id(answer.topic_id)} has {len(answer.nuggets)} nuggets, "
                    f"more than the protocol's {NuggetSet.MAX_NUGGETS}",
                )


def _labels_stored(answer_ids: list[int], *, assigner: str) -> dict[tuple[int, int], tuple[int, str]]:
    """(answer id, nugget id) -> (label id, label) of one assigner."""
    stored: dict[tuple[int, int], tuple[int, str]] = {}
    for batch in in_batches(answer_ids):
        # Filtered on the answers only, so that the database walks the (answer, nugget, assigner)
        # index: with the assigner in the WHERE clause SQLite scans every label of the assigner.
        for label_id, answer_id, nugget_id, label, label_assigner in AssignmentLabel.objects.filter(
            answer_id__in=batch
        ).values_list("id", "answer_id", "nugget_id", "label", "assigner"):
            if label_assigner == assigner:
                stored[answer_id, nugget_id] = (label_id, label)
    return stored


def _options_check(*, path: Path, nuggets: str, assigner: str, nuggets_name: str, assigner_name: str) -> None:
    slug_check(nuggets_name, option="--nuggets-name", path=path)
    slug_check(assigner_name, option="--assigner-name", path=path)
    if nuggets not in NUGGET_KINDS:
        raise ImportFailure(f"--nuggets must be one of {', '.join(NUGGET_KINDS)}, not {nuggets!r}", path=path)
    if assigner not in AssignmentLabel.AssignerKind.values:
        raise ImportFailure(
            f"--assigner must be one of {', '.join(AssignmentLabel.AssignerKind.values)}, not {assigner!r}", path=path
        )
    maker_kind_check(
        AssignmentLabel.objects.filter(assigner=assigner_name), kind_field="assigner_kind", kind=assigner,
        held=f"the assigner {assigner_name!r}", option="--assigner-name", path=path,
    )  # fmt: skip


class AssignmentsImport(JudgmentsImport[AssignedAnswer]):
    """One file's import, a chunk of lines at a time."""

    kind = IMPORT_ASSIGNMENTS
    chunk_size = CHUNK_ANSWERS

    def __init__(
        self, *, nuggets: str, assigner: str, nuggets_name: str, assigner_name: str, retire_labels: bool = False,
        run_id: str | None = None, **common: Any,
    ) -> None:  # fmt: skip
        super().__init__(**common)
        self.nuggets, self.nuggets_name, self.retire_labels = nuggets, nuggets_name, retire_labels
        self.assigner, self.assigner_name = assigner, assigner_name
        self.run_id = run_id
        self.run_named = run_id is not None  # --run-id named the file's run
        self.renamed_told = False

    def options(self) -> dict[str, Any]:
        return {
            "nuggets": self.nuggets,
            "assigner": self.assigner,
            "nuggets_name": self.nuggets_name,
            "assigner_name": self.assigner_name,
            "replace": self.replace,
            "run_id": self.run_id or "",
        }

    def check(self) -> None:
        if self.run_id is not None:
            option_id_checked(self.run_id, MAX_ID_CHARS, path=self.path, option="--run-id")
        _options_check(
            path=self.path, nuggets=self.nuggets, assigner=self.assigner, nuggets_name=self.nuggets_name,
            assigner_name=self.assigner_name,
        )  # fmt: skip

    def start(self) -> None:
        super().start()
        self.created_at = connection.ops.adapt_datetimefield_value(self.now)
        self.nugget_sets = NuggetSets(
            kind=self.nuggets, name=self.nuggets_name, replace=self.replace, retire_labels=self.retire_labels,
            writes=self.writes, result=self.result, path=self.path, user=self.user,
        )  # fmt: skip
        self.source = import_source_claim(
            writes=self.writes, family=LABEL_FAMILY, name=self.assigner_name, user=self.user, path=self.path,
            option="--assigner-name",
        )  # fmt: skip

    def parse(self) -> Iterator[AssignedAnswer]:
        return _parse_answers(self.path, run_id=self.run_id)

    def chunk_import(self, chunk: list[AssignedAnswer]) -> None:
        renamed = next((answer for answer in chunk if answer.named_as), None)
        if renamed is not None and not self.renamed_told:
            self.renamed_told = True
            self.result.warn(
                "run ids",
                f"{self.path}, line {renamed.line}: the records name the run {renamed.named_as!r} (nuggetizer writes "
                f"its answer file's name there); imported as run {renamed.run_id!r}, as --run-id says",
            )
        made_before = len(self.runs.made)
        keyed = self.answers_keyed(chunk, topic_field="qid")
        self.nugget_sets.prepare(chunk)
        answer_ids, stored_ids = self._answers(keyed)
        self._labels(keyed, answer_ids, _labels_stored(stored_ids, assigner=self.assigner_name))
        self.writes.scores_touch(
            family=SCORE_FAMILY, columns=(self.nugget_sets.name, self.assigner_name), topics=(a.topic_id for a in chunk)
        )
        # One run's file that made its run: nuggetizer's batch assigner writes one such file and names the run
        # after its answer file ("answers"), which nothing here can tell from a real run id: say so.
        made = self.runs.made[made_before:]
        if not self.run_named and len(made) == 1 and len({answer.run_id for answer in chunk}) == 1:
            run_id, line = made[0]
            self.result.warn(
                "new runs",
                f"{self.path}, line {line}: run {run_id!r} was not in the collection and was made from this file "
                "(a nuggetizer file names its answer file there: if so, import it again with --run-id, the run's id)",
            )

    def _answers(self, keyed: list[tuple[AnswerKey, AssignedAnswer]]) -> tuple[dict[AnswerKey, int], list[int]]:
        """The answer id of every line, made from `answer_text` where the run has none for the topic."""
        answers, made = self.answers_made(keyed, text=lambda line: line.answer_text)
        for key, answer in keyed:
            old = answers[key] if key not in made else None
            if old is not None and not same_modulo_whitespace(old.text, answer.answer_text):
                # One answer per run and topic: the labels are of this answer, whatever text the file quotes.
                self.result.warn(
                    "answer texts",
                    f"{self.path}, line {answer.line}: answer_text differs from the stored answer of run "
                    f"{answer.run_id} for topic {published_id(answer.topic_id)}; the labels are attached to the stored answer, "
                    "its text is kept",
                )
        ids = {key: answer.pk for key, answer in answers.items()}
        return ids, [answer.pk for key, answer in answers.items() if key not in made]

    def _labels(
        self,
        keyed: list[tuple[AnswerKey, AssignedAnswer]],
        answer_ids: dict[AnswerKey, int],
        stored: dict[tuple[int, int], tuple[int, str]],
    ) -> None:
        new_rows: list[tuple] = []
        changed: list[tuple[int, str]] = []
        for key, answer in keyed:
            answer_id = answer_ids[key]
            for index, (nugget_id, label) in enumerate(
                zip(self.nugget_sets.nugget_ids[answer.topic_id], answer.labels, strict=False)
            ):
                old = stored.get((answer_id, nugget_id))
                if old is None:
                    new_rows.append(
                        (
                            answer_id,
                            nugget_id,
                            self.assigner_name,
                            self.assigner,
                            self.source,
                            label,
                            self.batch.pk,
                            self.created_at,
                        )
                    )
                elif old[1] == label:
                    self.result.unchanged += 1
                elif self.replace:
                    changed.append((old[0], label))
                else:
                    raise ImportFailure(
                        f"assigner {self.assigner_name!r} has labeled this nugget {old[1]} on the answer of run "
                        f"{answer.run_id} for topic {published_id(answer.topic_id)}; use --replace to change it",
                        path=self.path,
                        line=answer.line,
                        field=f"nuggets[{index}].assignment",
                    )
        self.writes.rows(AssignmentLabel, LABEL_COLUMNS, new_rows)
        self.labels_replaced(AssignmentLabel, changed)
        self.result.count_made("labels", len(new_rows))


def assignments_import(
    *,
    path: Path,
    nuggets: str,
    assigner: str,
    nuggets_name: str | None = None,
    assigner_name: str | None = None,
    replace: bool = False,
    retire_labels: bool = False,
    user: User | None = None,
    run_id: str | None = None,
) -> JudgmentsImportResult:
    nuggets, assigner = str(nuggets), str(assigner)
    return AssignmentsImport(
        path=path,
        nuggets=nuggets,
        assigner=assigner,
        nuggets_name=str(nuggets_name or nuggets),
        assigner_name=str(assigner_name or assigner),
        replace=replace,
        retire_labels=retire_labels,
        user=user,
        run_id=run_id.strip() if run_id else None,
    ).run()
