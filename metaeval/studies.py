"""The disagreement study of the support paper (Section 5), for any label family that takes part.

Two sources are chosen; on each topic, k of the items they labelled
differently are drawn with a generator seeded by the study's seed and the
topic, so the same labels, k and seed give the same sample in the same order.
An independent assessor judges the sample from scratch, one work per topic
restricted to the sampled items, shown in the drawn order with nothing that
says why they were chosen; blind to both earlier labels by provenance (the
judging pages read only their own work's labels). An LLM may judge the same
items with the same prompt. The report sets Cohen's kappa between every pair
of judges on the sample (their Table 3), each judge's label distribution
(their Figure 3) and how often the later judges sided with either source.

What is family-specific (the work given, the LLM job, how an item is shown) is
the family's `StudyJudging`, registered with its label family by the app that
owns it (assessor.registry; support.study, assignment.study, argue.study).
"""

import hashlib
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction

from assessor.jobs.engine import JobRequestInvalid, job_queue
from assessor.jobs.llm.client import LLMConfig, LLMNotConfigured
from assessor.models import AssessorWork, LabelSource, Topic
from assessor.models.keys import published_id
from assessor.names import name_problem
from assessor.registry import StudyJudging, registry, study_item_key, study_item_stored
from assessor.work.services import WorkError, person_source_claim
from metaeval.judges import Item, TopicLabels, family_labels, flat, labels_by_topic
from metaeval.models import Study
from metaeval.stats import Confusion, confusion_from_pairs

DEFAULT_K = 15
ROLE_NAMES = {"a": "source a", "b": "source b", "assessor": "independent assessor", "llm": "LLM"}


class StudyError(ValueError):
    """A study that cannot be made as asked; the message says why."""


# --- Sampling: pure ------------------------------------------------------------------------


def disagreements(a: TopicLabels, b: TopicLabels) -> dict[str, list[Item]]:
    """Per topic, the items both sources labelled and labelled differently, sorted; topics without any left out."""
    result = {}
    for topic in sorted(set(a) & set(b)):
        items = sorted(item for item, label in a[topic].items() if item in b[topic] and b[topic][item] != label)
        if items:
            result[topic] = items
    return result


def topic_seed(seed: int, topic_id: str) -> int:
    """The generator's seed for one topic (stable across processes, unlike hash()); of its published id, so that
    the same labels in two campaigns give the same sample."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{published_id(topic_id)}".encode()).digest()[:8], "big")


def disagreements_sample(disagreeing: Mapping[str, Sequence[Item]], *, k: int, seed: int) -> dict[str, list[Item]]:
    """k items per topic (every item of a topic with fewer), in a shuffled order, reproducible from the seed."""
    if k < 1:
        raise StudyError("k, the items per topic, must be at least 1.")
    return {
        topic: random.Random(topic_seed(seed, topic)).sample(sorted(items), min(k, len(items)))
        for topic, items in sorted(disagreeing.items())
    }


# --- Families ------------------------------------------------------------------------------


def study_families() -> list[str]:
    """The label families a study can compare, as their apps registered them."""
    return registry.study_families()


def study_judging_or_none(family: str) -> StudyJudging | None:
    return registry.study_judging(family)


def study_judging(family: str) -> StudyJudging:
    judging = study_judging_or_none(family)
    if judging is None:
        names = ", ".join(judging.compares for name in study_families() if (judging := study_judging_or_none(name)))
        raise StudyError(f"A study compares {names}; not {family!r}.")
    return judging


# --- Making a study ------------------------------------------------------------------------


def _source(family: str, name: str) -> LabelSource:
    source = LabelSource.objects.filter(family=family, name=name).first()
    if source is None:
        known = ", ".join(LabelSource.objects.filter(family=family).values_list("name", flat=True)) or "none"
        raise StudyError(f"No {registry.family_label(family)} named {name!r}; there are: {known}.")
    return source


def _judgeable(judging: StudyJudging, disagreeing: dict[str, list[Item]]) -> dict[str, list[Item]]:
    """Only the items a person can judge (the family says which); topics left with none are left out."""
    if judging.judgeable is None:
        return disagreeing
    able = judging.judgeable([item for items in disagreeing.values() for item in items])
    kept = {topic: [item for item in items if item in able] for topic, items in disagreeing.items()}
    return {topic: items for topic, items in kept.items() if items}


@transaction.atomic
def study_create(
    *,
    name: str,
    family: str,
    source_a: str,
    source_b: str,
    assessor: User,
    by: User | None,
    seed: int,
    k: int = DEFAULT_K,
    nugget_set: str = "",
    llm_name: str = "",
    llm_endpoint: str | None = None,
    llm_config: LLMConfig | None = None,
) -> Study:
    """Sample the disagreements of `source_a` and `source_b`, give them to `assessor`, and record the study.

    The assessor's labels go into the people's source `name`. With `llm_name`,
    an LLM job (of the endpoint `llm_endpoint`, the default one when None, or `llm_config`) judges the sampled
    answers with the family's prompt into that name; it is queued when the
    study is stored.
    """
    if problem := name_problem(name):
        raise StudyError(f"The study's name: {problem}")
    judging = study_judging(family)
    if source_a == source_b:
        raise StudyError("Choose two different sources.")
    if Study.objects.filter(name=name).exists():
        raise StudyError(f"A study named {name!r} exists already: choose another name.")
    a, b = _source(family, source_a), _source(family, source_b)
    if judging.nugget_set and not nugget_set:
        raise StudyError(f"A study of {judging.compares} names the {judging.nugget_set} both sources labelled.")
    labels_a = labels_by_topic(family=family, name=a.name, nugget_set=nugget_set)
    labels_b = labels_by_topic(family=family, name=b.name, nugget_set=nugget_set)
    sample = disagreements_sample(_judgeable(judging, disagreements(labels_a, labels_b)), k=k, seed=seed)
    if not sample:
        raise StudyError(f"{a.name} and {b.name} disagree on no item they both labelled: there is nothing to study.")
    judge = _judge_claim(family=family, name=name, by=by)
    _sample_give(judging, sample, assessor=assessor, by=by, judge=judge, blind_to=[a, b], nugget_set=nugget_set)
    study = Study.objects.create(
        name=name,
        family=family,
        source_a=a,
        source_b=b,
        nugget_set_name=nugget_set,
        k=k,
        seed=seed,
        sample={topic: [study_item_stored(item) for item in items] for topic, items in sample.items()},
        judge=judge,
        assessor=assessor,
        created_by=by,
    )
    if llm_name:
        study.llm_job = _llm_job_create(
            study, judging, name=llm_name, user=by, endpoint=llm_endpoint, config=llm_config
        )
        study.llm_name = llm_name
        study.save(update_fields=["llm_job", "llm_name"])
        job_queue(study.llm_job)
    return study


def _judge_claim(*, family: str, name: str, by: User | None) -> LabelSource:
    """The people's source the study's labels go into: a new name, or one that holds no other work's labels."""
    try:
        judge = person_source_claim(family=family, name=name, by=by)
    except WorkError as exc:
        raise StudyError(exc.message) from None
    if AssessorWork.objects.filter(source=judge).exists():
        raise StudyError(f"{name!r} holds the labels of other work: choose another name.")
    return judge


def _sample_give(
    judging: StudyJudging,
    sample: Mapping[str, list[Item]],
    *,
    assessor: User,
    by: User | None,
    judge: LabelSource,
    blind_to: list[LabelSource],
    nugget_set: str,
) -> None:
    """Give each topic's sampled items to the assessor, blind to the two sources compared."""
    topics = {topic.pk: topic for topic in Topic.objects.filter(pk__in=list(sample))}
    for topic_id, items in sample.items():
        try:
            judging.give(
                topic=topics[topic_id],
                assessor=assessor,
                by=by,
                source=judge,
                blind_to=blind_to,
                items=items,
                nugget_set=nugget_set,
            )
        except WorkError as exc:
            raise StudyError(exc.message) from None


def _llm_job_create(
    study: Study,
    judging: StudyJudging,
    *,
    name: str,
    user: User | None,
    endpoint: str | None,
    config: LLMConfig | None,
):
    """The family's LLM job over the answers the sampled items are about."""
    items = [item for items in sample_items(study).values() for item in items]
    answers = sorted({shown.answer_id for shown in judging.shown(items).values()})
    try:
        return judging.llm_job(
            name=name,
            nugget_set=study.nugget_set_name,
            topics=sorted(study.sample),
            answers=answers,
            items=items,
            user=user,
            endpoint=endpoint,
            config=config,
        )
    except (JobRequestInvalid, LLMNotConfigured) as exc:
        raise StudyError(f"The LLM judge cannot start: {exc}") from None


# --- The report ------------------------------------------------------------------------------


@dataclass
class Judge:
    role: str  # "a", "b", "assessor" or "llm"
    name: str  # the label source
    labels: dict[Item, str]  # on the sampled items, counted labels only

    @property
    def role_name(self) -> str:
        return ROLE_NAMES[self.role]

    def distribution(self, labels: Sequence[str]) -> list[int]:
        counts = Counter(self.labels.values())
        return [counts.get(label, 0) for label in labels]


@dataclass
class PairAgreement:
    first: Judge
    second: Judge
    confusion: Confusion


@dataclass
class Sided:
    judge: Judge
    with_a: int
    with_b: int
    neither: int

    @property
    def judged(self) -> int:
        return self.with_a + self.with_b + self.neither


@dataclass
class StudyReport:
    study: Study
    labels: list[str]
    items: int
    judges: list[Judge]
    pairs: list[PairAgreement] = field(default_factory=list)
    sided: list[Sided] = field(default_factory=list)
    open_topics: list[str] = field(default_factory=list)  # the assessor's work not yet submitted (not counted)


def sample_items(study: Study) -> dict[str, list[Item]]:
    return {topic: [study_item_key(item) for item in items] for topic, items in study.sample.items()}


def study_judges(study: Study) -> list[Judge]:
    """The judges of the sample: both sources, the independent assessor and, if asked, the LLM."""
    sample = sample_items(study)
    wanted = {item for items in sample.values() for item in items}
    topics = sorted(sample)
    names = [("a", study.source_a.name), ("b", study.source_b.name), ("assessor", study.judge.name)]
    if study.llm_name:
        names.append(("llm", study.llm_name))
    judges = []
    for role, name in names:
        labels = flat(labels_by_topic(family=study.family, name=name, topics=topics, nugget_set=study.nugget_set_name))
        judges.append(Judge(role=role, name=name, labels={item: labels[item] for item in wanted if item in labels}))
    return judges


def sided_count(judge: Judge, a: Judge, b: Judge) -> Sided:
    """How often `judge` gave source a's label, source b's, or a third one, on the items all three labelled."""
    with_a = with_b = neither = 0
    for item, label in judge.labels.items():
        if item not in a.labels or item not in b.labels:
            continue
        if label == a.labels[item]:
            with_a += 1
        elif label == b.labels[item]:
            with_b += 1
        else:
            neither += 1
    return Sided(judge=judge, with_a=with_a, with_b=with_b, neither=neither)


def study_report(study: Study) -> StudyReport:
    labels = family_labels(study.family)
    judges = study_judges(study)
    report = StudyReport(study=study, labels=labels, items=study.items_total, judges=judges)
    for i, first in enumerate(judges):
        for second in judges[i + 1 :]:
            report.pairs.append(
                PairAgreement(
                    first=first, second=second, confusion=confusion_from_pairs(first.labels, second.labels, labels)
                )
            )
    a, b = judges[0], judges[1]
    report.sided = [sided_count(judge, a, b) for judge in judges[2:]]
    report.open_topics = sorted(
        published_id(topic_id)
        for topic_id in AssessorWork.objects.filter(source=study.judge)
        .exclude(status=AssessorWork.Status.SUBMITTED)
        .values_list("topic_id", flat=True)
    )
    return report
