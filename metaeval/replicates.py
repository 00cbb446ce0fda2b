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
from assessor.registry import registry
from assessor.scoring.scores import Scores
from assignment.selectors import nugget_scores
from metaeval.judges import Family, family_labels, flat, labels_by_topic
from metaeval.stats import Confusion, TauOptions, TauResult, confusion_from_pairs, shared_metrics, taus_compute_all
from support.selectors import support_scores


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


def _scores(*, family: str, name: str, nugget_set: str) -> Scores:
    """A source's run scores; raises LookupError where none are kept (another family without a score family)."""
    if family == Family.ASSIGNMENT:
        return nugget_scores(nuggets=nugget_set, assigner=name)
    if family == Family.SUPPORT:
        return support_scores(method=name)
    score_family = next((found for found in registry.score_families if found.name == family), None)
    if score_family is None:
        raise LookupError(f"no scores kept for the family {family!r}")
    return score_family.source((name,)).scores()


def replicate_agreement(replicate: LabelSource) -> ReplicateAgreement:
    """The agreement of a replicate with its first source and with every LLM source of the family."""
    first = replicate.replicate_of
    if first is None:
        raise ValueError(f"{replicate.name!r} is not a replicate")
    family = replicate.family
    nugget_set = (
        AssessorWork.objects.filter(source=replicate).values_list("nugget_set_name", flat=True).first() or ""
        if family == Family.ASSIGNMENT
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
    try:
        scores_first = _scores(family=family, name=first.name, nugget_set=nugget_set)
        scores_second = _scores(family=family, name=replicate.name, nugget_set=nugget_set)
    except LookupError:
        return result
    metrics = shared_metrics(scores_first, scores_second)
    result.taus = taus_compute_all(scores_first, scores_second, metrics, TauOptions(topics=frozenset(topics)))
    return result
