"""Score sources: what the meta-evaluation compares, named by one string.

- `NUGGETS/ASSIGNER`: a nugget condition computed here (`auto_edit/manual`,
  `manual/auto`, any nugget set name with any assigner name);
- `support:METHOD`: a support judging method (`support:scratch`, `support:postedit`);
- `scores:NAME`: a score table imported with `import_scores --name NAME`;
- `FAMILY:COLUMNS`: a source of any other score family an app registered
  (assessor.registry.ScoreFamily), its columns joined by "/".
"""

import re
from dataclasses import dataclass
from enum import StrEnum

from django.db.models import Sum

from assessor.models import KeptRunScore, KeptSource, LabelSource
from assessor.registry import ScoreFamily, registry
from assessor.scoring.kept import family_columns, source_name
from assessor.scoring.lifecycle import open_included
from assessor.scoring.scores import Scores
from assessor.sources import source_get, source_owner
from metaeval import selectors
from metaeval.stats import Confusion, confusion_from_counts

# The score families of the TREC 2024 family's conditions and support methods (assignment.parts,
# support.parts), whose sources are written in their own syntax: NUGGETS/ASSIGNER and support:METHOD.
CONDITIONS = "conditions"
METHODS = "methods"

NAME = r"[-\w.]+"
CONDITION_PATTERN = re.compile(rf"^(?P<nuggets>{NAME})/(?P<assigner>{NAME})$")
PREFIXED_PATTERN = re.compile(rf"^(?P<prefix>support|scores):(?P<name>{NAME})$")
FAMILY_PATTERN = re.compile(rf"^(?P<family>\w+):(?P<columns>{NAME}(?:/{NAME})*)$")


class SourceError(LookupError):
    """An unknown or malformed source; the message says which sources exist."""


class SourceKind(StrEnum):
    CONDITION = "condition"
    SUPPORT = "support"
    SCORES = "scores"
    FAMILY = "family"  # a source of another registered score family


@dataclass(frozen=True)
class Source:
    kind: SourceKind
    name: str  # the support method or score table; for a condition, "NUGGETS/ASSIGNER"
    nuggets: str = ""
    assigner: str = ""
    family: str = ""  # FAMILY: the registered score family
    columns: tuple[str, ...] = ()  # FAMILY: the source's columns in it

    def __str__(self) -> str:
        if self.kind is SourceKind.CONDITION:
            return f"{self.nuggets}/{self.assigner}"
        if self.kind is SourceKind.FAMILY:
            return f"{self.family}:{'/'.join(self.columns)}"
        return f"{self.kind}:{self.name}"


def _columns(source: Source) -> tuple[str, ...]:
    """The source's columns in its score family."""
    if source.kind is SourceKind.CONDITION:
        return (source.nuggets, source.assigner)
    if source.kind is SourceKind.SUPPORT:
        return (source.name,)
    return source.columns


def _registered(name: str) -> ScoreFamily:
    family = next((family for family in registry.score_families if family.name == name), None)
    if family is None:
        raise LookupError(f"no score family named {name!r}")
    return family


def _registered_columns(name: str) -> list[tuple[str, ...]]:
    """The sources of a first-family score family, none where its app is not installed."""
    family = next((family for family in registry.score_families if family.name == name), None)
    return family_columns(family) if family is not None else []


def other_families() -> list[ScoreFamily]:
    """The registered score families beyond the nugget conditions and support methods, read the same way."""
    return [family for family in registry.score_families if family.name not in (CONDITIONS, METHODS)]


def _other_family(name: str) -> ScoreFamily | None:
    return next((family for family in other_families() if family.name == name), None)


def sources_list() -> list[str]:
    """Every source that has data, as the strings `source_parse` reads."""
    return (
        [f"{nuggets}/{assigner}" for nuggets, assigner in _registered_columns(CONDITIONS)]
        + [f"support:{method}" for (method,) in _registered_columns(METHODS)]
        + [f"scores:{name}" for name in selectors.score_tables_list()]
        + [f"{family.name}:{'/'.join(columns)}" for family in other_families() for columns in family_columns(family)]
    )


def _unknown(text: str, why: str) -> SourceError:
    known = ", ".join(sources_list()) or "none yet"
    return SourceError(f"unknown source {text!r}: {why}. Sources with data: {known}")


def source_parse(text: str) -> Source:
    """The source a string names (syntax only; `source_load` checks that it has data)."""
    text = text.strip()
    if match := CONDITION_PATTERN.match(text):
        return Source(kind=SourceKind.CONDITION, name=text, nuggets=match["nuggets"], assigner=match["assigner"])
    if match := PREFIXED_PATTERN.match(text):
        kind = SourceKind.SUPPORT if match["prefix"] == "support" else SourceKind.SCORES
        return Source(kind=kind, name=match["name"])
    if (match := FAMILY_PATTERN.match(text)) and _other_family(match["family"]) is not None:
        columns = tuple(match["columns"].split("/"))
        return Source(kind=SourceKind.FAMILY, name=text, family=match["family"], columns=columns)
    raise _unknown(text, "write NUGGETS/ASSIGNER, support:METHOD, scores:NAME or FAMILY:NAME")


def source_scores(source: Source) -> Scores:
    """The source's scores; SourceError when it has no data."""
    try:
        if source.kind is SourceKind.SCORES:
            return selectors.score_table_scores(name=source.name)
        if source.kind is SourceKind.FAMILY:
            _source_require(source)
        return source_family(source).source(_columns(source)).scores()
    except SourceError:
        raise
    except LookupError as exc:
        raise _unknown(str(source), str(exc.args[0] if exc.args else exc)) from None


def source_require(source: Source) -> None:
    """SourceError unless the source has data (a cheap check, without loading it)."""
    try:
        if source.kind is SourceKind.SCORES:
            if source.name not in selectors.score_tables_list():
                raise LookupError(f"no score table named {source.name!r}")
        else:
            _source_require(source)
    except LookupError as exc:
        raise _unknown(str(source), str(exc.args[0] if exc.args else exc)) from None


def source_family(source: Source) -> ScoreFamily:
    """The score family of a condition, a support method or another family's source (LookupError for a score
    table, or a family no app registers)."""
    if source.kind is SourceKind.CONDITION:
        return _registered(CONDITIONS)
    if source.kind is SourceKind.SUPPORT:
        return _registered(METHODS)
    family = _other_family(source.family)
    if family is None:
        raise LookupError(f"no score family named {source.family!r}")
    return family


def _source_require(source: Source) -> None:
    """LookupError unless the source has labels: as its family checks it (the first family's, from the labels),
    or else among the family's listed sources."""
    family = source_family(source)
    if family.require is not None:
        family.require(_columns(source))
    elif source.columns not in family_columns(family):
        raise LookupError(f"no scores for {'/'.join(source.columns)!r} in {source.family}")


def _kept_name(source: Source) -> tuple[str, str]:
    """The kept source (family, name) of a condition, a support method or another family's source."""
    return source_family(source).name, source_name(_columns(source))


def source_stamp(source: Source) -> str | None:
    """What changes whenever the source's kept figures or counted labels do (its kept source's stamp,
    made anew by every refresh); None for what is not kept: score tables, open work counted, no row yet."""
    if open_included() or source.kind is SourceKind.SCORES:
        return None
    family, name = _kept_name(source)
    stamp = KeptSource.objects.filter(family=family, name=name).values_list("stamp", flat=True).first()
    return stamp or None


def source_answers(source: Source) -> int:
    """How many answers the source's kept scores evaluate: what a comparison's computation grows with
    (0 for what is not kept)."""
    if source.kind is SourceKind.SCORES:
        return 0
    family, name = _kept_name(source)
    # Through the kept source as its manager reads it: in the campaign in effect, where two may name one alike.
    kept = KeptSource.objects.filter(family=family, name=name)
    answered = KeptRunScore.objects.filter(source__in=kept).aggregate(n=Sum("answered"))
    return answered["n"] or 0


def source_load(text: str) -> tuple[Source, Scores]:
    source = source_parse(text)
    return source, source_scores(source)


def labels_comparable(a: Source, b: Source) -> bool:
    """Labels pair up for two conditions on one nugget set (same nugget rows), two support methods, two
    sources of a family whose labels pair up (its `crosstab`), or a support method and a source of a family
    whose labels answer the same question (its `support_crosstab`)."""
    if a.kind is SourceKind.CONDITION and b.kind is SourceKind.CONDITION:
        return a.nuggets == b.nuggets
    if a.kind is SourceKind.FAMILY and b.kind is SourceKind.FAMILY and a.family == b.family:
        family = _other_family(a.family)
        return family is not None and family.crosstab is not None
    if _support_crossed(a, b) is not None:
        return True
    return a.kind is SourceKind.SUPPORT and b.kind is SourceKind.SUPPORT


def _support_crossed(a: Source, b: Source) -> ScoreFamily | None:
    """The family of the other side, when one side is a support method and the other's family compares with it."""
    kinds = {a.kind, b.kind}
    if kinds != {SourceKind.SUPPORT, SourceKind.FAMILY}:
        return None
    other = a if a.kind is SourceKind.FAMILY else b
    family = _other_family(other.family)
    return family if family is not None and family.support_crosstab is not None else None


def sources_confusion(a: Source, b: Source, *, partial_yes: bool = False) -> Confusion | None:
    """The confusion matrix of the labels two sources share, rows a, columns b; None if they share none.

    A support method against a yes/no family reads FS as yes and PS and NS as no, or PS as yes too
    (`partial_yes`)."""
    if not labels_comparable(a, b):
        return None
    crossed = _support_crossed(a, b)
    if crossed is not None:
        assert crossed.support_crosstab is not None  # _support_crossed said so
        method, other = (a, b) if a.kind is SourceKind.SUPPORT else (b, a)
        crosstab = crossed.support_crosstab(method.name, other.columns, partial_yes)
        counts, total_a, total_b = crosstab.counts, crosstab.total_a, crosstab.total_b
        if method is b:  # rows a: the method's matrix turned round
            counts = {(label_b, label_a): n for (label_a, label_b), n in counts.items()}
            total_a, total_b = total_b, total_a
        labels = list(crosstab.labels)
    else:
        family = source_family(a)
        assert family.crosstab is not None  # labels_comparable said so
        crosstab = family.crosstab(_columns(a), _columns(b))
        counts, total_a, total_b, labels = crosstab.counts, crosstab.total_a, crosstab.total_b, list(crosstab.labels)
    confusion = confusion_from_counts(counts, labels)
    confusion.missing_b = total_a - confusion.total
    confusion.missing_a = total_b - confusion.total
    return confusion


def source_describe(source: Source, scores: Scores | None = None) -> dict[str, float | int]:
    """The descriptive statistics of a source (the study's table); `scores`, the source's scores when the caller
    has loaded them already (a comparison has), are counted rather than loaded again."""
    if source.kind is SourceKind.SCORES:
        if source.name not in selectors.score_tables_list():
            raise _unknown(str(source), f"no score table named {source.name!r}")
        return selectors.score_table_description_data(name=source.name)
    family = source_family(source)
    if family.describe is not None:
        try:
            return family.describe(_columns(source))
        except LookupError as exc:
            raise _unknown(str(source), str(exc.args[0] if exc.args else exc)) from None
    if scores is None:
        scores = source_scores(source)
    return {"topics": len(scores.topics), "runs": len(scores.runs), "rows": len(scores.per_topic)}


def _label_source(source: Source) -> LabelSource | None:
    """The label source behind a source, where its score family names one (a condition's assigner, a support
    method); none behind a score table."""
    if source.kind is SourceKind.SCORES:
        return None
    family = source_family(source)
    if family.label_source is None:
        return None
    label_family, name = family.label_source(_columns(source))
    return source_get(family=label_family, name=name)


def source_judge(source: Source) -> dict | None:
    """Who labelled a source: people, files, or an LLM with its endpoint, model and prompt versions."""
    label_source = _label_source(source)
    if label_source is None:
        return None
    judge: dict = {"kind": label_source.kind, "made_by": source_owner(label_source)}
    if label_source.kind == LabelSource.Kind.LLM:
        judge.update(
            endpoint=label_source.endpoint_name,
            model=label_source.model,
            prompt_versions=label_source.prompt_versions,
            job=label_source.job_id,
        )
    return judge


def sources_notes(texts: list[str]) -> list[str]:
    """What keeps the named sources' scores from being final (open work, running jobs, stale labels), each note
    once, read for all of them together; a name that is no source has none (its error is shown elsewhere)."""
    sources: list[Source] = []
    for text in texts:
        try:
            sources.append(source_parse(text))
        except SourceError:
            continue
    by_family: dict[str, list[tuple[str, ...]]] = {}
    for source in sources:
        if source.kind is not SourceKind.SCORES:
            by_family.setdefault(source_family(source).name, []).append(_columns(source))
    of_family = {
        (name, columns): own
        for name, columns_list in by_family.items()
        for columns, own in _registered(name).notes(columns_list).items()
    }
    notes: list[str] = []
    for source in sources:
        own = of_family[(source_family(source).name, _columns(source))] if source.kind is not SourceKind.SCORES else []
        notes += [note for note in own if note not in notes]
    return notes
