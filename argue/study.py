"""ARGUE-style judgments in the disagreement study (metaeval.studies): the family's `StudyJudging`.

The items are argue.agreement's: (0, citation id) for "does the document support the sentence?" and (1,
sentence id, question id, answer index) for "does the sentence give this gold answer?". The independent
assessor is given the sampled ones only (argue.judging.argue_study_give); the LLM judges the sampled items'
reports with the family's prompts, checking every gold answer only when a sampled one is not of a document
the sentence cites (the default gating would not ask it).
"""

from collections import defaultdict
from collections.abc import Collection

from django.contrib.auth.models import User

from argue.agreement import ANSWER_ITEM, SUPPORT_ITEM
from argue.judging import argue_study_give, report_plans
from argue.kinds import ARGUE_FAMILY, ARGUE_WORK
from argue.llm import argue_job_create
from argue.models import AnswerAttestation, SupportAttestation
from assessor.collection.exporting import PROVENANCE_FIELDS
from assessor.jobs.llm.client import LLMConfig
from assessor.models import Citation, Job, Sentence
from assessor.registry import StudyItem, StudyItemShown, StudyJudging
from assessor.scoring.lifecycle import labels_counted
from nuggets.banks import bank_questions


def _sentences(items: Collection[StudyItem]) -> dict[int, tuple[str, int, int]]:
    """sentence id -> (topic id, answer id, index), of the sentences the answer items are about."""
    ids = [item[1] for item in items if item[0] == ANSWER_ITEM]
    return {
        pk: (topic, answer, index)
        for pk, topic, answer, index in Sentence.objects.filter(pk__in=ids).values_list(
            "pk", "answer__topic_id", "answer_id", "index"
        )
    }


def study_shown(items: Collection[StudyItem]) -> dict[StudyItem, StudyItemShown]:
    cited = {
        pk: (answer, index)
        for pk, answer, index in Citation.objects.filter(
            pk__in=[item[1] for item in items if item[0] == SUPPORT_ITEM]
        ).values_list("pk", "sentence__answer_id", "sentence__index")
    }
    sentences = _sentences(items)
    shown = {}
    for item in items:
        if item[0] == SUPPORT_ITEM and item[1] in cited:
            answer, index = cited[item[1]]
            shown[item] = StudyItemShown(answer, f"citation {item[1]} (sentence {index}): supports?")
        elif item[0] == ANSWER_ITEM and item[1] in sentences:
            _topic, answer, index = sentences[item[1]]
            shown[item] = StudyItemShown(answer, f"sentence {index}, question {item[2]}, gold answer {item[3] + 1}")
    return shown


def study_labelled(name: str, items: Collection[StudyItem]) -> dict[StudyItem, tuple[str, tuple]]:
    wanted = set(items)
    supports = labels_counted(
        SupportAttestation.objects.filter(
            source__family=ARGUE_FAMILY,
            source__name=name,
            citation_id__in=[item[1] for item in wanted if item[0] == SUPPORT_ITEM],
        ).exclude(label="")
    )
    found: dict[StudyItem, tuple[str, tuple]] = {
        (SUPPORT_ITEM, row[0]): (row[1], row[2:])
        for row in supports.order_by().values_list("citation_id", "label", *PROVENANCE_FIELDS)
    }
    answers = labels_counted(
        AnswerAttestation.objects.filter(
            source__family=ARGUE_FAMILY,
            source__name=name,
            sentence_id__in=[item[1] for item in wanted if item[0] == ANSWER_ITEM],
        )
    )
    for row in answers.order_by().values_list(
        "sentence_id", "question_id", "answer_index", "label", *PROVENANCE_FIELDS
    ):
        found[(ANSWER_ITEM, row[0], row[1], row[2])] = (row[3], row[4:])
    return {item: made for item, made in found.items() if item in wanted}


def study_judgeable(items: Collection[StudyItem]) -> set[StudyItem]:
    """A person cannot judge whether a passage without text supports a sentence; every gold answer can be."""
    empty = set(
        Citation.objects.filter(
            pk__in=[item[1] for item in items if item[0] == SUPPORT_ITEM], segment__text=""
        ).values_list("pk", flat=True)
    )
    return {item for item in items if not (item[0] == SUPPORT_ITEM and item[1] in empty)}


def gating_asks(items: Collection[StudyItem], bank: str) -> bool:
    """Whether the default gating (the gold answers of the documents a sentence cites) asks every sampled
    answer item; a report's limit cuts sentences for the LLM as for a person."""
    wanted = {item for item in items if item[0] == ANSWER_ITEM}
    if not wanted:
        return True
    by_topic: dict[str, set[int]] = defaultdict(set)
    for _sentence, (topic, answer, _index) in _sentences(wanted).items():
        by_topic[topic].add(answer)
    asked: set[StudyItem] = set()
    banks = bank_questions(bank, list(by_topic))
    for topic, answers in by_topic.items():
        questions = banks.get(topic, [])
        for report in report_plans(topic_id=topic, answer_ids=sorted(answers), questions=questions, check_all=False):
            for sentence in report.planned:
                asked.update((ANSWER_ITEM, sentence.sentence_id, questions[q].pk or 0, a) for q, a in sentence.checks)
    return wanted <= asked


def study_job(
    *,
    name: str,
    nugget_set: str,
    topics: list[str],
    answers: list[int],
    items: list[StudyItem],
    user: User | None,
    endpoint: str | None,
    config: LLMConfig | None,
) -> Job:
    return argue_job_create(
        name=name,
        bank=nugget_set,
        topics=topics,
        answers=answers,
        check_all=not gating_asks(items, nugget_set),
        user=user,
        endpoint=endpoint,
        config=config,
    )


STUDY = StudyJudging(
    work_kind=ARGUE_WORK,
    compares="ARGUE-style judgments",
    give=argue_study_give,
    llm_job=study_job,
    shown=study_shown,
    labelled=study_labelled,
    judgeable=study_judgeable,
    nugget_set="question bank",
)
