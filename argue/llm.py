"""ARGUE-style judgments by an LLM: one job item per report, judged against a question bank.

Each report is first cut to its request's limit (`argue.cut`). Then, for each kept sentence: one call per
cited document (does it support the sentence?), and one call per (question, gold answer) the sentence is
checked against (by default the answers one of whose supporting documents it cites; all with
`check_all`). A cited document without text is not shown to the model: its support is stored as unjudged
(None, scored as no). The item's judgments go into the job's ARGUE-style source, with the job on each.
"""

import re
from dataclasses import dataclass
from functools import partial

from django.contrib.auth.models import User

from argue.cut import sentences_kept
from argue.kinds import ARGUE, ARGUE_FAMILY
from argue.metrics import answers_to_check
from argue.models import AnswerAttestation, JudgedReport, SupportAttestation
from argue.prompts import ANSWER_AGREEMENT, CITATION_SUPPORT
from assessor.jobs.engine import JobRequestInvalid, job_create, job_prompt, job_source, output_name_check
from assessor.jobs.llm.client import LLMConfig, LLMSession
from assessor.jobs.llm.prompts import prompt_messages
from assessor.jobs.selection import runs_select, topics_select
from assessor.models import Answer, Citation, Job, JobItem, LabelSource, Sentence
from nuggets.banks import bank_questions
from reports.chat_layout import answer_field, answer_sections
from reports.texts import request_texts

FIRST_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class YesNo:
    yes: bool
    reasoning: str


def yes_no_read(raw: str, *, field: str) -> YesNo:
    """The answer's `field` section: yes when its first word is "yes" (any case), no otherwise, "no" or
    neither. An answer without the section (or with it empty) is unusable and asked again."""
    value = answer_field(raw, field)
    word = FIRST_WORD.search(value)
    return YesNo(
        yes=word is not None and word.group().lower() == "yes", reasoning=answer_sections(raw).get("reasoning", "")
    )


@dataclass(frozen=True)
class ReportJudged:
    kept: int
    questions: list[int]  # the bank's questions as judged against
    supports: list[tuple[int, bool | None, str]]  # (citation id, supports, reasoning)
    agrees: list[tuple[int, int, int, bool, str]]  # (sentence id, question id, answer index, agrees, reasoning)


def argue_select(
    *, bank: str, topics: list[str] | None = None, runs: list[str] | None = None, answers: list[int] | None = None
) -> list[int]:
    """The reports a job of this selection judges: the selected runs' answers on the selected topics that
    have a counted bank of that name (raises JobRequestInvalid for an unknown id or a bank with no topic);
    `answers`: only these of them (a study's sample)."""
    topic_ids = [topic.id for topic in topics_select(topics)]
    banked = sorted(bank_questions(bank, topic_ids))
    if not banked:
        raise JobRequestInvalid(f"the bank {bank!r} has no counted questions on the selected topics")
    selected = Answer.objects.filter(topic_id__in=banked, run__in=runs_select(runs))
    if answers is not None:
        selected = selected.filter(pk__in=answers)
    return list(selected.order_by("topic_id", "run__run_id").values_list("pk", flat=True))


def argue_job_create(
    *,
    name: str,
    bank: str,
    topics: list[str] | None = None,
    runs: list[str] | None = None,
    check_all: bool = False,
    user: User | None = None,
    queue: str | None = None,
    config: LLMConfig | None = None,
    endpoint: str | None = None,
    answers: list[int] | None = None,
) -> Job:
    """A job over the selected topics and runs (`answers`: only these reports, such as a study's sample)."""
    output_name_check(
        kind=ARGUE,
        name=name,
        taken=LabelSource.objects.filter(family=ARGUE_FAMILY, name=name).exists(),
        family=ARGUE_FAMILY,
    )
    selected = argue_select(bank=bank, topics=topics, runs=runs, answers=answers)
    items = [(f"answer:{pk}", {"answer": pk}) for pk in selected]
    params = {"bank": bank, "check_all": check_all, "runs": runs or [], "topics": topics or [], "queue": queue or ""}
    return job_create(
        kind=ARGUE,
        output_name=name,
        params=params,
        items=items,
        prompts=[CITATION_SUPPORT.name, ANSWER_AGREEMENT.name],
        user=user,
        config=config,
        endpoint=endpoint,
        family=ARGUE_FAMILY,
    )


def item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> ReportJudged:
    answer = Answer.objects.get(pk=item.payload["answer"])
    topic_id = answer.topic_id
    sentences = list(Sentence.objects.filter(answer=answer).order_by("index").values_list("pk", "text"))
    kept = sentences_kept(topic_id=topic_id, texts=[text for _, text in sentences])
    questions = bank_questions(job.params["bank"], [topic_id]).get(topic_id)
    if questions is None:
        raise LookupError(f"the bank {job.params['bank']!r} has no counted questions on topic {topic_id}")
    request = request_texts([topic_id])[topic_id]
    request_text = " ".join(part for part in (request.title, request.problem_statement) if part)
    support_prompt = job_prompt(job, CITATION_SUPPORT.name)
    answer_prompt = job_prompt(job, ANSWER_AGREEMENT.name)
    citations: dict[int, list[tuple[int, str, str]]] = {}
    for sentence_id, citation_id, docid, text in (
        Citation.objects.filter(sentence_id__in=[pk for pk, _ in sentences[:kept]])
        .order_by("sentence_id", "position")
        .values_list("sentence_id", "pk", "segment_id", "segment__text")
    ):
        citations.setdefault(sentence_id, []).append((citation_id, docid, text))
    supports: list[tuple[int, bool | None, str]] = []
    agrees: list[tuple[int, int, int, bool, str]] = []
    for sentence_id, sentence in sentences[:kept]:
        cited = citations.get(sentence_id, [])
        for citation_id, _, document in cited:
            if not document:
                supports.append((citation_id, None, ""))
                continue
            messages = prompt_messages(support_prompt, request=request_text, sentence=sentence, document=document)
            said = llm.ask(support_prompt, messages, partial(yes_no_read, field="supports"))
            supports.append((citation_id, said.yes, said.reasoning))
        check_all = bool(job.params.get("check_all"))
        for question_index, answer_index in answers_to_check(
            [docid for _, docid, _ in cited], questions, check_all=check_all
        ):
            question = questions[question_index]
            messages = prompt_messages(
                answer_prompt,
                question=question.text,
                gold_answer=question.answers[answer_index].text,
                sentence=sentence,
            )
            said = llm.ask(answer_prompt, messages, partial(yes_no_read, field="agrees"))
            assert question.pk is not None  # read from the database
            agrees.append((sentence_id, question.pk, answer_index, said.yes, said.reasoning))
    return ReportJudged(
        kept=kept, questions=[q.pk for q in questions if q.pk is not None], supports=supports, agrees=agrees
    )


def _label(yes: bool | None) -> str:
    return "" if yes is None else "yes" if yes else "no"


def item_store(*, job: Job, item: JobItem, result: ReportJudged) -> None:
    source = job_source(job, ARGUE_FAMILY)
    JudgedReport.objects.create(
        source=source,
        answer_id=item.payload["answer"],
        bank=job.params["bank"],
        kept=result.kept,
        check_all=bool(job.params.get("check_all")),
        questions=result.questions,
        job=job,
    )
    SupportAttestation.objects.bulk_create(
        SupportAttestation(source=source, citation_id=citation_id, label=_label(yes), reasoning=reasoning, job=job)
        for citation_id, yes, reasoning in result.supports
    )
    AnswerAttestation.objects.bulk_create(
        AnswerAttestation(
            source=source,
            sentence_id=sentence_id,
            question_id=question_id,
            answer_index=answer_index,
            label=_label(yes),
            reasoning=reasoning,
            job=job,
        )
        for sentence_id, question_id, answer_index, yes, reasoning in result.agrees
    )
