"""Nugget lists, one topic a line: the nuggetizer's format, and what export_nuggets writes.

`{"qid", "query"?, "nuggets": [{"text", "importance": "vital"|"okay"}]}`

Each line becomes the topic's nugget set of the given name and kind, its
nuggets in file order. Drafts (LLM nuggets for post-editing) carry no
importance: it may be absent, empty or null, and is ignored if given.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

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
    import_file,
    read_jsonl,
    require,
)
from assessor.sources import import_source_claim
from nuggets.dependents import Change, nugget_list_changed, nuggets_delete, set_dependents
from nuggets.kinds import IMPORT_NUGGETS, LABEL_FAMILY
from nuggets.models import Nugget, NuggetSet

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


def _parse_topic(record: dict[str, Any], *, drafts: bool, path: Path, line: int) -> TopicNuggets:
    topic_id = id_field(record, ("qid", "topic_id"), path=path, line=line)
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
    for number, record in read_jsonl(path):
        topic = _parse_topic(record, drafts=drafts, path=path, line=number)
        first = first_line.setdefault(topic.topic_id, number)
        if first != number:
            raise ImportFailure(
                f"topic {topic.topic_id} repeated (first on line {first}); a file has one nugget list a topic",
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
            f"the nugget set {nugget_set.name!r} of topic {nugget_set.topic_id} has labels on its nuggets ({held}); "
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
            f"{path}, line {line}: replacing nugget set {nugget_set.name!r} of topic {nugget_set.topic_id} "
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
            f"the drafts {nugget_set.name!r} of topic {nugget_set.topic_id} are being post-edited "
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


def nuggets_import(
    *,
    path: Path,
    kind: str,
    name: str | None = None,
    replace: bool = False,
    retire_labels: bool = False,
    user: User | None = None,
) -> JudgmentsImportResult:
    path = Path(path)
    kind = str(kind)
    name = str(name or kind)
    if kind not in NuggetSet.Kind.values:
        raise ImportFailure(f"the kind must be one of {', '.join(NuggetSet.Kind.values)}, not {kind!r}", path=path)
    slug_check(name, option="--name", path=path)
    return import_file(
        lambda writes: _nuggets_prepare(
            writes, path=path, kind=kind, name=name, replace=replace, retire_labels=retire_labels, user=user
        ),
        kind=IMPORT_NUGGETS,
        path=path,
        options={"kind": kind, "name": name, "replace": replace},
        user=user,
    )


def _nuggets_prepare(
    writes: Writes, *, path: Path, kind: str, name: str, replace: bool, retire_labels: bool, user: User | None
) -> JudgmentsImportResult:
    drafts = kind == NuggetSet.Kind.DRAFT
    batch = writes.batch
    result = JudgmentsImportResult(path=str(path))
    now = timezone.now()
    source = import_source_claim(writes=writes, family=LABEL_FAMILY, name=name, user=user, path=path, option="--name")
    for chunk in chunked(_parse_topics(path, drafts=drafts), CHUNK_TOPICS):
        result.lines += len(chunk)
        topics_require(((topic.line, topic.topic_id) for topic in chunk), path=path, field="qid")
        stored = {s.topic_id: s for s in NuggetSet.objects.filter(name=name, topic_id__in=[t.topic_id for t in chunk])}
        stored_lists: dict[int, list[tuple[str, str]]] = {s.pk: [] for s in stored.values()}
        for set_id, text, importance in (
            Nugget.objects.filter(nugget_set_id__in=list(stored_lists))
            .order_by("nugget_set_id", "position")
            .values_list("nugget_set_id", "text", "importance")
        ):
            stored_lists[set_id].append((text, importance))

        to_fill: list[tuple[NuggetSet, TopicNuggets]] = []
        replaced: list[NuggetSet] = []
        for topic in chunk:
            nugget_set = stored.get(topic.topic_id)
            if nugget_set is None:
                nugget_set = writes.create_one(
                    NuggetSet(
                        topic_id=topic.topic_id,
                        kind=kind,
                        name=name,
                        source_id=source,
                        imported_from=batch,
                        created_at=now,
                    )
                )
                result.count_made("nugget sets")
                to_fill.append((nugget_set, topic))
                continue
            if nugget_set.form != NuggetSet.Form.FACTS:
                raise ImportFailure(
                    f"topic {topic.topic_id} has a question bank named {name!r}: fact nuggets need another --name "
                    "(banks are imported with import_banks)",
                    path=path,
                    line=topic.line,
                    field="qid",
                )
            stored_list = tuple(stored_lists[nugget_set.pk])
            if stored_list == topic.nuggets and nugget_set.kind == kind:
                result.unchanged += 1
                continue
            if not replace:
                if nugget_set.kind != kind:
                    problem, where = f"is stored as {nugget_set.kind} nuggets, not {kind}", "nuggets"
                else:
                    problem, where = "is stored with another nugget list", _difference(stored_list, topic.nuggets)
                raise ImportFailure(
                    f"the nugget set {name!r} of topic {topic.topic_id} {problem}; use --replace to change it "
                    "(or --name for another set)",
                    path=path,
                    line=topic.line,
                    field=where,
                )
            edited = list(nugget_set.edited_sets.order_by("name").values_list("name", flat=True))
            if edited:
                drafts_set_aside(nugget_set, edited, writes=writes, confirmed=retire_labels, path=path, line=topic.line)
                # The stored set keeps its labels under another name: the topic's kept scores are refreshed.
                writes.scores_touch_everywhere([topic.topic_id])
                result.warn(
                    "replaced nugget sets",
                    f"{path}, line {topic.line}: the drafts of topic {topic.topic_id} that {', '.join(edited)} "
                    f"started from are kept as {nugget_set.name!r}; the file's drafts are {name!r}",
                )
                nugget_set = writes.create_one(
                    NuggetSet(
                        topic_id=topic.topic_id,
                        kind=kind,
                        name=name,
                        source_id=source,
                        imported_from=batch,
                        created_at=now,
                    )
                )
                result.replaced += 1
                to_fill.append((nugget_set, topic))
                continue
            # Its labels are retired with its old nuggets, and the retirement refreshes the kept scores they
            # counted in (the dependents of nuggets.dependents); a new set has no labels, so no scores yet.
            replaced_nuggets_retire(
                nugget_set, writes=writes, retire=retire_labels, result=result, path=path, line=topic.line,
                option="--retire-labels",
            )  # fmt: skip
            nugget_set.kind = kind
            nugget_set.imported_from, nugget_set.created_by, nugget_set.job = batch, None, None
            # Tabs showing the old list are told it changed.
            nugget_set.version += 1
            writes.update([nugget_set], ["kind", "imported_from", "created_by", "job", "version"])
            result.replaced += 1
            to_fill.append((nugget_set, topic))
            replaced.append(nugget_set)

        made = writes.create(
            Nugget(
                nugget_set=nugget_set,
                position=position,
                text=text,
                importance=importance,
                imported_from=batch,
                created_at=now,
            )
            for nugget_set, topic in to_fill
            for position, (text, importance) in enumerate(topic.nuggets)
        )
        result.count_made("nuggets", len(made))
        for nugget_set in replaced:
            writes.later(partial(replaced_nuggets_announce, nugget_set.pk, user=user))
        for _, topic in to_fill:
            if not drafts and len(topic.nuggets) > NuggetSet.MAX_NUGGETS:
                result.warn(
                    "long nugget lists",
                    f"{path}, line {topic.line}: topic {topic.topic_id} has {len(topic.nuggets)} nuggets, "
                    f"more than the protocol's {NuggetSet.MAX_NUGGETS}",
                )
    result.warnings_close()
    return result
