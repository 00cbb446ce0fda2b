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
from assignment import kinds as assignment_kinds
from assignment.selectors import FAMILY as CONDITIONS
from assignment.selectors import condition_require, conditions_list, conditions_notes, nugget_scores
from metaeval import selectors
from metaeval.stats import Confusion, confusion_from_counts, nugget_condition_describe, support_method_describe
from support import kinds as support_kinds
from support.selectors import FAMILY as METHODS
from support.selectors import method_require, methods_notes, support_methods_list, support_scores

NAME = r"[-\w.]+"
CONDITION_PATTERN = re.compile(rf"^(?P<nuggets>{NAME})/(?P<assigner>{NAME})$")
PREFIXED_PATTERN = re.compile(rf"^(?P<prefix>support|scores):(?P<name>{NAME})$")
FAMILY_PATTERN = re.compile(rf"^(?P<family>\w+):(?P<columns>{NAME}(?:/{NAME})*)$")
ASSIGNMENT_LABELS = ["not_support", "partial_support", "support"]
SUPPORT_LABELS = ["NS", "PS", "FS"]


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


def other_families() -> list[ScoreFamily]:
    """The registered score families beyond the nugget conditions and support methods, read the same way."""
    return [family for family in registry.score_families if family.name not in (CONDITIONS, METHODS)]


def _other_family(name: str) -> ScoreFamily | None:
    return next((family for family in other_families() if family.name == name), None)


def sources_list() -> list[str]:
    """Every source that has data, as the strings `source_parse` reads."""
    return (
        [f"{nuggets}/{assigner}" for nuggets, assigner in conditions_list()]
        + [f"support:{method}" for method in support_methods_list()]
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
        if source.kind is SourceKind.CONDITION:
            return nugget_scores(nuggets=source.nuggets, assigner=source.assigner)
        if source.kind is SourceKind.SUPPORT:
            return support_scores(method=source.name)
        if source.kind is SourceKind.FAMILY:
            return _family_source_scores(source)
        return selectors.score_table_scores(name=source.name)
    except SourceError:
        raise
    except LookupError as exc:
        raise _unknown(str(source), str(exc.args[0] if exc.args else exc)) from None


def source_require(source: Source) -> None:
    """SourceError unless the source has data (a cheap check, without loading it)."""
    try:
        if source.kind is SourceKind.CONDITION:
            condition_require(nuggets=source.nuggets, assigner=source.assigner)
        elif source.kind is SourceKind.SUPPORT:
            method_require(method=source.name)
        elif source.kind is SourceKind.FAMILY:
            _family_source_require(source)
        elif source.name not in selectors.score_tables_list():
            raise LookupError(f"no score table named {source.name!r}")
    except LookupError as exc:
        raise _unknown(str(source), str(exc.args[0] if exc.args else exc)) from None


def _family_of(source: Source) -> ScoreFamily:
    family = _other_family(source.family)
    if family is None:
        raise LookupError(f"no score family named {source.family!r}")
    return family


def _family_source_require(source: Source) -> None:
    if source.columns not in family_columns(_family_of(source)):
        raise LookupError(f"no scores for {'/'.join(source.columns)!r} in {source.family}")


def _family_source_scores(source: Source) -> Scores:
    _family_source_require(source)
    return _family_of(source).source(source.columns).scores()


def _kept_name(source: Source) -> tuple[str, str]:
    """The kept source (family, name) of a condition, a support method or another family's source."""
    if source.kind is SourceKind.CONDITION:
        return CONDITIONS, f"{source.nuggets}/{source.assigner}"
    if source.kind is SourceKind.FAMILY:
        return source.family, source_name(source.columns)
    return METHODS, source.name


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
    answered = KeptRunScore.objects.filter(source__family=family, source__name=name).aggregate(n=Sum("answered"))
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
    elif a.kind is SourceKind.CONDITION:
        counts, total_a, total_b = selectors.assignment_crosstab(
            nuggets=a.nuggets, assigner_a=a.assigner, assigner_b=b.assigner
        )
        labels = ASSIGNMENT_LABELS
    elif a.kind is SourceKind.FAMILY:
        family = _other_family(a.family)
        assert family is not None and family.crosstab is not None  # labels_comparable said so
        crosstab = family.crosstab(a.columns, b.columns)
        counts, total_a, total_b, labels = crosstab.counts, crosstab.total_a, crosstab.total_b, list(crosstab.labels)
    else:
        counts, total_a, total_b = selectors.support_crosstab(method_a=a.name, method_b=b.name)
        labels = SUPPORT_LABELS
    confusion = confusion_from_counts(counts, labels)
    confusion.missing_b = total_a - confusion.total
    confusion.missing_a = total_b - confusion.total
    return confusion


def source_describe(source: Source) -> dict[str, float | int]:
    """The descriptive statistics of a source (the study's table)."""
    if source.kind is SourceKind.CONDITION:
        nuggets, label_counts, topics = selectors.condition_description_data(
            nuggets=source.nuggets, assigner=source.assigner
        )
        if not topics:
            raise _unknown(str(source), "no assignment labels for this nugget set and assigner")
        return nugget_condition_describe(nuggets, label_counts, topics)
    if source.kind is SourceKind.SUPPORT:
        support_counts, topics = selectors.support_description_data(method=source.name)
        if not support_counts:
            raise _unknown(str(source), "no support labels for this method")
        return support_method_describe(support_counts, topics)
    if source.kind is SourceKind.FAMILY:
        scores = source_scores(source)
        return {"topics": len(scores.topics), "runs": len(scores.runs), "rows": len(scores.per_topic)}
    if source.name not in selectors.score_tables_list():
        raise _unknown(str(source), f"no score table named {source.name!r}")
    return selectors.score_table_description_data(name=source.name)


def _label_source(source: Source) -> LabelSource | None:
    """The label source behind a condition's assigner or a support method; none behind a score table."""
    if source.kind is SourceKind.CONDITION:
        return source_get(family=assignment_kinds.LABEL_FAMILY, name=source.assigner)
    if source.kind is SourceKind.SUPPORT:
        return source_get(family=support_kinds.LABEL_FAMILY, name=source.name)
    return None


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
    conditions = [(s.nuggets, s.assigner) for s in sources if s.kind is SourceKind.CONDITION]
    methods = [(s.name,) for s in sources if s.kind is SourceKind.SUPPORT]
    of_condition = conditions_notes(conditions) if conditions else {}
    of_method = methods_notes(methods) if methods else {}
    of_family = {
        (source.family, source.columns): _family_of(source).notes([source.columns])[source.columns]
        for source in sources
        if source.kind is SourceKind.FAMILY
    }
    notes: list[str] = []
    for source in sources:
        if source.kind is SourceKind.CONDITION:
            own = of_condition[(source.nuggets, source.assigner)]
        elif source.kind is SourceKind.SUPPORT:
            own = of_method[(source.name,)]
        elif source.kind is SourceKind.FAMILY:
            own = of_family[(source.family, source.columns)]
        else:
            own = []
        notes += [note for note in own if note not in notes]
    return notes
