"""Inter-assessor agreement: a second assessor's replicate beside the first person's labels and the LLMs'.

A replicate is a people's label source marked `replicate_of` another
(assessor.work.services.replicate_source_claim). On the items both people
labelled (submitted work only: the lifecycle's rule), the human-human
confusion matrix is set beside each LLM source's agreement with either
person on the items all three labelled, and the two people's run scores are
compared by Kendall's tau over the topics the replicate covers.
"""

from dataclasses import dataclass, field

from assessor.models import AssessorWork, LabelSource
from assessor.registry import LabelFamily, registry
from assessor.scoring.scores import Scores
from metaeval.judges import family_labels, flat, labels_by_topic
from metaeval.stats import Confusion, TauOptions, TauResult, confusion_from_pairs, shared_metrics, taus_compute_all


@dataclass
class LLMAgreement:
    name: str
    items: int  # items the LLM and both people labelled
    with_first: Confusion
    with_replicate: Confusion


@dataclass
class ReplicateAgreement:
    family: str
    first: str
    replicate: str
    nugget_set: str  # nugget assignment: the list both people labelled against
    topics: list[str]
    human: Confusion  # rows the first person, columns the replicate
    llms: list[LLMAgreement] = field(default_factory=list)
    taus: list[TauResult] = field(default_factory=list)  # run level, over `topics`

    @property
    def family_label(self) -> str:
        return registry.family_label(self.family)


def replicate_sources() -> list[LabelSource]:
    return list(
        LabelSource.objects.filter(replicate_of__isnull=False).select_related("replicate_of").order_by("family", "name")
    )


def _scores(*, label_family: LabelFamily, name: str, nugget_set: str) -> Scores:
    """A source's run scores, from the score family that scores the label family's sources; raises LookupError
    where none are kept (a family without a score family)."""
    wanted = label_family.score_family or label_family.name
    score_family = next((found for found in registry.score_families if found.name == wanted), None)
    if score_family is None:
        raise LookupError(f"no scores kept for the family {label_family.name!r}")
    columns = (nugget_set, name) if label_family.set_item_labels is not None else (name,)
    return score_family.source(columns).scores()


def replicate_agreement(replicate: LabelSource) -> ReplicateAgreement:
    """The agreement of a replicate with its first source and with every LLM source of the family."""
    first = replicate.replicate_of
    if first is None:
        raise ValueError(f"{replicate.name!r} is not a replicate")
    family = replicate.family
    label_family = registry.label_families.get(family)
    nugget_set = (
        AssessorWork.objects.filter(source=replicate).values_list("nugget_set_name", flat=True).first() or ""
        if label_family is not None and label_family.set_item_labels is not None
        else ""
    )
    labels = family_labels(family)
    second = labels_by_topic(family=family, name=replicate.name, nugget_set=nugget_set)
    topics = sorted(second)
    first_labels = flat(labels_by_topic(family=family, name=first.name, topics=topics, nugget_set=nugget_set))
    second_labels = flat(second)
    result = ReplicateAgreement(
        family=family,
        first=first.name,
        replicate=replicate.name,
        nugget_set=nugget_set,
        topics=topics,
        human=confusion_from_pairs(first_labels, second_labels, labels),
    )
    if not topics:
        return result
    both = {item for item in second_labels if item in first_labels}
    llm_names = LabelSource.objects.filter(family=family, kind=LabelSource.Kind.LLM).order_by("name")
    for name in llm_names.values_list("name", flat=True):
        llm = flat(labels_by_topic(family=family, name=name, topics=topics, nugget_set=nugget_set))
        shared = {item: label for item, label in llm.items() if item in both}
        if shared:
            result.llms.append(
                LLMAgreement(
                    name=name,
                    items=len(shared),
                    with_first=confusion_from_pairs({i: first_labels[i] for i in shared}, shared, labels),
                    with_replicate=confusion_from_pairs({i: second_labels[i] for i in shared}, shared, labels),
                )
            )
    if label_family is None:
        return result
    try:
        scores_first = _scores(label_family=label_family, name=first.name, nugget_set=nugget_set)
        scores_second = _scores(label_family=label_family, name=replicate.name, nugget_set=nugget_set)
    except LookupError:
        return result
    metrics = shared_metrics(scores_first, scores_second)
    result.taus = taus_compute_all(scores_first, scores_second, metrics, TauOptions(topics=frozenset(topics)))
    return result
