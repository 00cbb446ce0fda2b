"""Nugget lists, one topic a line: the nuggetizer's format, and what export_nuggets writes.

`{"qid", "query"?, "nuggets": [{"text", "importance": "vital"|"okay"}]}`

Each line becomes the topic's nugget set of the given name and kind, its
nuggets in file order. Drafts (LLM nuggets for post-editing) carry no
importance: it may be absent, empty or null, and is ignored if given.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from django.contrib.auth.models import User
from django.utils import timezone

from assessor.collection.importing.answers import (
    JudgmentsImportResult,
    id_field,
    json_type,
    slug_check,
    text_field,
    topics_require,
)
from assessor.importing.base import (
    MAX_NUGGET_CHARS,
    ImportFailure,
    Writes,
    chunked,
    read_jsonl,
    require,
)
from assessor.importing.pipeline import Changes, RecordImport
from assessor.importing.topic_ids import FileTopicIds
from assessor.models.keys import published_id
from assessor.sources import import_source_claim
from nuggets.dependents import Change, nugget_list_changed, nuggets_delete, set_dependents
from nuggets.kinds import IMPORT_NUGGETS, LABEL_FAMILY
from nuggets.models import Nugget, NuggetSet

TOPIC_FIELDS = ("qid", "topic_id")
IMPORTANCES = frozenset(Nugget.Importance.values)
CHUNK_TOPICS = 500
# The upload page's box that confirms replacing a labelled list (the commands' --retire-labels).
RETIRE_LABELS_LABEL = "Retire labels on replaced nuggets"

NuggetList = tuple[tuple[str, str], ...]  # ((text, importance), ...); importance "" for drafts


@dataclass(frozen=True)
class TopicNuggets:
    line: int
    topic_id: str
    nuggets: NuggetList


def _parse_nugget(raw: Any, index: int, *, drafts: bool, path: Path, line: int) -> tuple[str, str]:
    where = f"nuggets[{index}]"
    if not isinstance(raw, dict):
        raise ImportFailure(f"expected an object, got {json_type(raw)}", path=path, line=line, field=where)
    text = text_field(raw, "text", limit=MAX_NUGGET_CHARS, path=path, line=line, where=where, strip=False)
    if drafts:
        return text, ""
    importance = raw.get("importance")
    if importance not in IMPORTANCES:
        raise ImportFailure(
            f"{importance!r} is not an importance (vital or okay)", path=path, line=line, field=f"{where}.importance"
        )
    return text, importance


def _parse_topic(
    record: dict[str, Any], *, drafts: bool, path: Path, line: int, topic_ids: FileTopicIds
) -> TopicNuggets:
    """One line's nugget list, its topic as the stored key in the campaign in effect."""
    topic_id = id_field(record, TOPIC_FIELDS, path=path, line=line)
    topic_id = topic_ids.record_key(record, TOPIC_FIELDS, topic_id, path=path, line=line)
    raw_nuggets = require(record, "nuggets", list, path=path, line=line)
    if not raw_nuggets:
        raise ImportFailure("no nuggets", path=path, line=line, field="nuggets")
    limit = NuggetSet.MAX_DRAFTS if drafts else None
    if limit is not None and len(raw_nuggets) > limit:
        raise ImportFailure(
            f"{len(raw_nuggets)} drafts, at most {limit} are allowed", path=path, line=line, field="nuggets"
        )
    nuggets = tuple(
        _parse_nugget(raw, index, drafts=drafts, path=path, line=line) for index, raw in enumerate(raw_nuggets)
    )
    return TopicNuggets(line=line, topic_id=topic_id, nuggets=nuggets)


def _parse_topics(path: Path, *, drafts: bool) -> Iterator[TopicNuggets]:
    first_line: dict[str, int] = {}
    topic_ids = FileTopicIds()
    for number, record in read_jsonl(path):
        topic = _parse_topic(record, drafts=drafts, path=path, line=number, topic_ids=topic_ids)
        first = first_line.setdefault(topic.topic_id, number)
        if first != number:
            raise ImportFailure(
                f"topic {published_id(topic.topic_id)} repeated (first on line {first}); a file has one nugget list a topic",
                path=path,
                line=number,
                field="qid",
            )
        yield topic


def _difference(stored: NuggetList, new: NuggetList) -> str:
    for index, ((text, importance), (new_text, new_importance)) in enumerate(zip(stored, new, strict=False)):
        if text != new_text:
            return f"nuggets[{index}].text"
        if importance != new_importance:
            return f"nuggets[{index}].importance"
    return "nuggets"


def replaced_nuggets_retire(
    nugget_set: NuggetSet,
    *,
    writes: Writes,
    retire: bool,
    result: JudgmentsImportResult,
    path: Path,
    line: int,
    option: str,
) -> None:
    """Under --replace: the set's old nuggets go; labels on them are retired only when the organizer says so."""
    dependents = set_dependents(nugget_set)
    if dependents and not retire:
        held = ", ".join(f"{d.labels} of {d.source}" for d in dependents)
        raise ImportFailure(
            f"the nugget set {nugget_set.name!r} of topic {published_id(nugget_set.topic_id)} has labels on its nuggets ({held}); "
            f"replacing it retires them (kept, not scored) and asks whoever labelled it for the new nuggets: "
            f"confirm it to replace the list ({option} on the command line, "
            f"'{RETIRE_LABELS_LABEL}' on the upload page)",
            path=path,
            line=line,
            field="nuggets",
        )
    # At the switch, by set: a nugget the workspace added meanwhile goes too, its labels retired first.
    writes.later(partial(_set_nuggets_delete, nugget_set.pk))
    labels = sum(d.labels for d in dependents)
    if labels:
        result.warn(
            "replaced nugget sets",
            f"{path}, line {line}: replacing nugget set {nugget_set.name!r} of topic {published_id(nugget_set.topic_id)} "
            f"retired {labels} labels on its old nuggets",
        )


def drafts_set_aside(
    nugget_set: NuggetSet, edited: list[str], *, writes: Writes, confirmed: bool, path: Path, line: int
) -> None:
    """Under --replace, drafts that post-editing started from keep their nuggets under another name.

    A post-edited nugget names the drafts it came from (`Nugget.derived_from`) and its
    edit log names them for Undo: deleting them would cut that lineage. So the stored set is
    renamed `NAME-replaced-N` (the post-edited lists still name it as their drafts, the
    upload page lists it, and nothing can delete it while they do) and the file's drafts
    become a new set under NAME, which new post-editing starts from.
    """
    aside = _aside_name(nugget_set)
    if not confirmed:
        raise ImportFailure(
            f"the drafts {nugget_set.name!r} of topic {published_id(nugget_set.topic_id)} are being post-edited "
            f"({', '.join(edited)}); replacing them keeps them, renamed {aside!r}, as what those lists started "
            f"from, and makes the file's drafts the topic's drafts for new post-editing: confirm it "
            f"(--retire-labels on the command line, '{RETIRE_LABELS_LABEL}' on the upload page), "
            "or import the new drafts under another --name",
            path=path,
            line=line,
            field="nuggets",
        )
    nugget_set.name = aside
    writes.update([nugget_set], ["name"])


def _aside_name(nugget_set: NuggetSet) -> str:
    taken = set(NuggetSet.objects.filter(topic_id=nugget_set.topic_id).values_list("name", flat=True))
    number = 1
    while (name := _suffixed(nugget_set.name, f"-replaced-{number}")) in taken:
        number += 1
    return name


def _suffixed(name: str, suffix: str) -> str:
    limit = NuggetSet._meta.get_field("name").max_length or len(name + suffix)
    return name[: limit - len(suffix)] + suffix


def _set_nuggets_delete(nugget_set_id: int) -> None:
    nuggets_delete(
        list(Nugget.objects.filter(nugget_set_id=nugget_set_id).values_list("pk", flat=True)), reason=Change.REPLACED
    )


def replaced_nuggets_announce(nugget_set_id: int, *, user: User | None) -> None:
    """After a replaced set got its new nuggets: every one is new to whoever labelled the old list."""
    nugget_set = NuggetSet.objects.get(pk=nugget_set_id)
    ids = nugget_set.nuggets.values_list("pk", flat=True)
    nugget_list_changed(nugget_set, dict.fromkeys(ids, Change.REPLACED), by=user)


class TopicLine(Protocol):
    """A parsed line of a file of one nugget set a topic."""

    @property
    def line(self) -> int: ...

    @property
    def topic_id(self) -> str: ...


Line = TypeVar("Line", bound=TopicLine)


class NuggetSetsImport(RecordImport[Line, str, NuggetSet, JudgmentsImportResult]):
    """Each line becomes the set `name` of its topic (fact nuggets, or a bank's questions): made, kept or replaced whole.

    A subclass says which form its sets are, what stands in them (`contents_stored`, `same`, `contents_create`)
    and what its errors say.
    """

    form: ClassVar[str]
    made_what: ClassVar[str]  # what a new set is counted as
    topic_field: ClassVar[str]  # the topic's field in the file
    replaced_fields: ClassVar[tuple[str, ...]] = ("kind", "imported_from", "created_by", "job", "version")

    def __init__(self, *, kind: str, name: str, retire_labels: bool = False, **common: Any) -> None:
        super().__init__(**common)
        self.set_kind, self.name, self.retire_labels = kind, name, retire_labels

    def check(self) -> None:
        if self.set_kind not in NuggetSet.Kind.values:
            raise ImportFailure(
                f"the kind must be one of {', '.join(NuggetSet.Kind.values)}, not {self.set_kind!r}", path=self.path
            )
        slug_check(self.name, option="--name", path=self.path)

    def result_new(self) -> JudgmentsImportResult:
        return JudgmentsImportResult(path=str(self.path))

    def start(self) -> None:
        self.now = timezone.now()
        self.source = import_source_claim(
            writes=self.writes, family=LABEL_FAMILY, name=self.name, user=self.user, path=self.path, option="--name"
        )

    def chunks(self) -> Iterable[list[Line]]:
        return chunked(self.parse(), CHUNK_TOPICS)

    def chunk_prepare(self, chunk: list[Line]) -> None:
        topics_require(((line.line, line.topic_id) for line in chunk), path=self.path, field=self.topic_field)
        sets = NuggetSet.objects.filter(name=self.name, topic_id__in=[line.topic_id for line in chunk])
        self.stored = {nugget_set.topic_id: nugget_set for nugget_set in sets}
        self.contents = self.contents_stored([nugget_set.pk for nugget_set in self.stored.values()])
        self.to_fill: list[tuple[NuggetSet, Line]] = []
        self.replaced_sets: list[NuggetSet] = []

    def resolve(self, line: Line) -> str:
        return line.topic_id

    def compare(self, changes: Changes[str, Line, NuggetSet], key: str, line: Line) -> None:
        nugget_set = self.existing(key)
        if nugget_set is None:
            self.to_fill.append((self.set_new(key), line))
            self.result.count_made(self.made_what)
        elif nugget_set.form != self.form:
            raise self.form_conflict(line)
        elif self.same(nugget_set, line):
            self.result.unchanged += 1
        elif not self.replace:
            raise self.conflict(nugget_set, line)
        else:
            self.set_replace(nugget_set, line)

    def set_new(self, topic_id: str) -> NuggetSet:
        return self.writes.create_one(
            NuggetSet(
                topic_id=topic_id, kind=self.set_kind, name=self.name, form=self.form, source_id=self.source,
                imported_from=self.batch, created_at=self.now,
            )
        )  # fmt: skip

    def set_replace(self, nugget_set: NuggetSet, line: Line) -> None:
        """Under --replace: the set takes the file's contents; labels on the old ones are retired if confirmed."""
        # Its labels are retired with its old nuggets, and the retirement refreshes the kept scores they
        # counted in (the dependents of nuggets.dependents); a new set has no labels, so no scores yet.
        replaced_nuggets_retire(
            nugget_set, writes=self.writes, retire=self.retire_labels, result=self.result, path=self.path,
            line=line.line, option="--retire-labels",
        )  # fmt: skip
        nugget_set.kind = self.set_kind
        nugget_set.imported_from, nugget_set.created_by, nugget_set.job = self.batch, None, None
        # Tabs showing the old list are told it changed.
        nugget_set.version += 1
        self.writes.update([nugget_set], self.replaced_fields)
        self.result.replaced += 1
        self.to_fill.append((nugget_set, line))
        self.replaced_sets.append(nugget_set)

    def write(self, changes: Changes[str, Line, NuggetSet]) -> None:
        self.contents_create()
        for nugget_set in self.replaced_sets:
            self.writes.later(partial(replaced_nuggets_announce, nugget_set.pk, user=self.user))
        for _, line in self.to_fill:
            if (count := self.contents_count(line)) is not None and count > NuggetSet.MAX_NUGGETS:
                self.result.warn(*self.long_warning(line, count))

    def finish(self) -> None:
        self.result.warnings_close()

    # --- what a form of set says --------------------------------------------------------------------

    def contents_stored(self, set_ids: list[int]) -> dict[int, Any]:
        raise NotImplementedError

    def contents_create(self) -> None:
        """The contents of every set of `to_fill`, in file order."""
        raise NotImplementedError

    def contents_count(self, line: Line) -> int | None:
        """How many nuggets the line gives, where the protocol's cap applies."""
        raise NotImplementedError

    def long_warning(self, line: Line, count: int) -> tuple[str, str]:
        raise NotImplementedError

    def form_conflict(self, line: Line) -> ImportFailure:
        raise NotImplementedError


def nuggets_import(
    *,
    path: Path,
    kind: str,
    name: str | None = None,
    replace: bool = False,
    retire_labels: bool = False,
    user: User | None = None,
) -> JudgmentsImportResult:
    kind = str(kind)
    name = str(name or kind)
    return NuggetsImport(path=path, kind=kind, name=name, replace=replace, retire_labels=retire_labels, user=user).run()


class NuggetsImport(NuggetSetsImport[TopicNuggets]):
    """Fact nuggets in the nuggetizer's layout; drafts that post-editing started from are set aside, not replaced."""

    kind = IMPORT_NUGGETS
    form = NuggetSet.Form.FACTS
    made_what = "nugget sets"
    topic_field = "qid"

    def options(self) -> dict[str, Any]:
        return {"kind": self.set_kind, "name": self.name, "replace": self.replace}

    def parse(self) -> Iterator[TopicNuggets]:
        return _parse_topics(self.path, drafts=self.set_kind == NuggetSet.Kind.DRAFT)

    def contents_stored(self, set_ids: list[int]) -> dict[int, NuggetList]:
        lists: dict[int, list[tuple[str, str]]] = {set_id: [] for set_id in set_ids}
        for set_id, text, importance in (
            Nugget.objects.filter(nugget_set_id__in=set_ids)
            .order_by("nugget_set_id", "position")
            .values_list("nugget_set_id", "text", "importance")
        ):
            lists[set_id].append((text, importance))
        return {set_id: tuple(nuggets) for set_id, nuggets in lists.items()}

    def same(self, stored: NuggetSet, line: TopicNuggets) -> bool:
        return self.contents[stored.pk] == line.nuggets and stored.kind == self.set_kind

    def form_conflict(self, line: TopicNuggets) -> ImportFailure:
        return ImportFailure(
            f"topic {published_id(line.topic_id)} has a question bank named {self.name!r}: fact nuggets need another --name "
            "(banks are imported with import_banks)",
            path=self.path,
            line=line.line,
            field="qid",
        )

    def conflict(self, stored: NuggetSet, line: TopicNuggets) -> ImportFailure:
        if stored.kind != self.set_kind:
            problem, where = f"is stored as {stored.kind} nuggets, not {self.set_kind}", "nuggets"
        else:
            problem, where = "is stored with another nugget list", _difference(self.contents[stored.pk], line.nuggets)
        return ImportFailure(
            f"the nugget set {self.name!r} of topic {published_id(line.topic_id)} {problem}; use --replace to change it "
            "(or --name for another set)",
            path=self.path,
            line=line.line,
            field=where,
        )

    def set_replace(self, nugget_set: NuggetSet, line: TopicNuggets) -> None:
        edited = list(nugget_set.edited_sets.order_by("name").values_list("name", flat=True))
        if not edited:
            super().set_replace(nugget_set, line)
            return
        drafts_set_aside(
            nugget_set, edited, writes=self.writes, confirmed=self.retire_labels, path=self.path, line=line.line
        )
        # The stored set keeps its labels under another name: the topic's kept scores are refreshed.
        self.writes.scores_touch_everywhere([line.topic_id])
        self.result.warn(
            "replaced nugget sets",
            f"{self.path}, line {line.line}: the drafts of topic {published_id(line.topic_id)} that {', '.join(edited)} "
            f"started from are kept as {nugget_set.name!r}; the file's drafts are {self.name!r}",
        )
        self.result.replaced += 1
        self.to_fill.append((self.set_new(line.topic_id), line))

    def contents_create(self) -> None:
        made = self.writes.create(
            Nugget(
                nugget_set=nugget_set, position=position, text=text, importance=importance, imported_from=self.batch,
                created_at=self.now,
            )
            for nugget_set, topic in self.to_fill
            for position, (text, importance) in enumerate(topic.nuggets)
        )  # fmt: skip
        self.result.count_made("nuggets", len(made))

    def contents_count(self, line: TopicNuggets) -> int | None:
        return None if self.set_kind == NuggetSet.Kind.DRAFT else len(line.nuggets)

    def long_warning(self, line: TopicNuggets, count: int) -> tuple[str, str]:
        return (
            "long nugget lists",
            f"{self.path}, line {line.line}: topic {published_id(line.topic_id)} has {count} nuggets, "
            f"more than the protocol's {NuggetSet.MAX_NUGGETS}",
        )
