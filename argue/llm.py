"""ARGUE-style judgments by an LLM: one job item per report, judged against a question bank.

Each report is first cut to its request's limit (`argue.cut`). Then, for each kept sentence in report order,
ARGUE's questions (argue.metrics says how their answers score):
- a sentence that cites: one call per cited document (does it support the sentence?), and one call per kept
  (question, gold answer) the sentence is checked against (`argue.metrics.answers_to_check`: by default the
  answers one of whose supporting documents it cites; all with `check_all` or on a no-reference bank);
- a sentence that cites nothing: with `negatives`, is it a negative assertion? (if yes, every kept gold
  answer is asked, and nothing else); does it need a citation? if yes, and a sentence comes before it, is it
  the first instance of its claim given the sentences before it?
A cited document without text is not shown to the model: its support is stored as unjudged (None, scored as
no). The item's judgments go into the job's ARGUE-style source, with the job on each.
"""

import re
from dataclasses import dataclass, field
from functools import partial

from django.contrib.auth.models import User

from argue.cut import sentences_kept
from argue.kinds import ARGUE, ARGUE_FAMILY
from argue.metrics import ScoredBank, answers_to_check, bank_as_scored, first_instance_asked
from argue.models import AnswerAttestation, JudgedReport, SentenceCheck, SupportAttestation, UncitedAttestation
from argue.prompts import (
    ANSWER_AGREEMENT,
    CITATION_SUPPORT,
    FIRST_INSTANCE,
    NEEDS_CITATION,
    NEGATIVE_ASSERTION,
)
from assessor.contracts import PromptText
from assessor.jobs.engine import JobRequestInvalid, job_create, job_prompt, job_source, output_name_check
from assessor.jobs.llm.client import LLMAnswerFailed, LLMConfig, LLMSession
from assessor.jobs.llm.parsing import AnswerUnusable
from assessor.jobs.llm.prompts import prompt_messages
from assessor.jobs.selection import runs_select, topics_select
from assessor.models import Answer, Citation, Job, JobItem, LabelSource, Sentence
from assessor.models.keys import published_id
from nuggets.banks import Question, bank_questions
from reports.chat_layout import answer_field, answer_sections
from reports.texts import request_texts

FIRST_WORD = re.compile(r"[A-Za-z]+")
PROMPTS = (CITATION_SUPPORT, ANSWER_AGREEMENT, NEEDS_CITATION, FIRST_INSTANCE, NEGATIVE_ASSERTION)


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


def bare_yes_no_read(raw: str) -> bool:
    """A one-word YES/NO answer (Auto-ARGUE's): its first word, in any case; anything else is unusable, and
    asked again."""
    word = FIRST_WORD.search(raw)
    said = word.group().lower() if word else ""
    if said not in ("yes", "no"):
        raise AnswerUnusable("answer with one word, YES or NO")
    return said == "yes"


@dataclass(frozen=True)
class ReportJudged:
    kept: int
    questions: list[int]  # the bank's questions as judged against
    supports: list[tuple[int, bool | None, str]]  # (citation id, supports, reasoning)
    agrees: list[tuple[int, int, int, bool, str]]  # (sentence id, question id, answer index, agrees, reasoning)
    uncited: list[tuple[int, str, bool]] = field(default_factory=list)  # (sentence id, SentenceCheck, yes)
    malformed: int = 0  # bare yes/no answers that were neither after the re-asks (counted as no)


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
    negatives: bool = False,
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
    params = {
        "bank": bank,
        "check_all": check_all,
        "negatives": negatives,
        "runs": runs or [],
        "topics": topics or [],
        "queue": queue or "",
    }
    return job_create(
        kind=ARGUE,
        output_name=name,
        params=params,
        items=items,
        prompts=[prompt.name for prompt in PROMPTS if negatives or prompt is not NEGATIVE_ASSERTION],
        user=user,
        config=config,
        endpoint=endpoint,
        family=ARGUE_FAMILY,
    )


@dataclass
class _Judging:
    """One report's judging under way: the job's prompts, the bank as scored, what has been said so far."""

    llm: LLMSession
    job: Job
    request: str
    questions: list[Question]
    bank: ScoredBank
    supports: list[tuple[int, bool | None, str]] = field(default_factory=list)
    agrees: list[tuple[int, int, int, bool, str]] = field(default_factory=list)
    uncited: list[tuple[int, str, bool]] = field(default_factory=list)
    malformed: int = 0

    def bare(self, prompt: PromptText, sentence_id: int, asked: str, **fields: str) -> bool:
        """One bare YES/NO check of an uncited sentence; neither after the re-asks: no, and counted malformed."""
        template = job_prompt(self.job, prompt.name)
        try:
            yes = self.llm.ask(template, prompt_messages(template, **fields), bare_yes_no_read)
        except LLMAnswerFailed:
            yes = False
            self.malformed += 1
        self.uncited.append((sentence_id, asked, yes))
        return yes

    def answers(self, sentence_id: int, sentence: str, keys: list[tuple[int, int]]) -> None:
        template = job_prompt(self.job, ANSWER_AGREEMENT.name)
        for question_index, answer_index in keys:
            question = self.questions[question_index]
            messages = prompt_messages(
                template, question=question.text, gold_answer=question.answers[answer_index].text, sentence=sentence
            )
            said = self.llm.ask(template, messages, partial(yes_no_read, field="agrees"))
            assert question.pk is not None  # read from the database
            self.agrees.append((sentence_id, question.pk, answer_index, said.yes, said.reasoning))

    def cited(self, sentence_id: int, sentence: str, cited: list[tuple[int, str, str]]) -> None:
        """Support per cited document, then the gold answers of what it cites. A sentence a document does not
        support is penalized whatever it says, but its answers are asked all the same, as people are asked them
        on the sentence's page: the two sources then judge the same questions."""
        template = job_prompt(self.job, CITATION_SUPPORT.name)
        for citation_id, _, document in cited:
            if not document:
                self.supports.append((citation_id, None, ""))
                continue
            messages = prompt_messages(template, request=self.request, sentence=sentence, document=document)
            said = self.llm.ask(template, messages, partial(yes_no_read, field="supports"))
            self.supports.append((citation_id, said.yes, said.reasoning))
        check_all = bool(self.job.params.get("check_all"))
        self.answers(sentence_id, sentence, answers_to_check([d for _, d, _ in cited], self.bank, check_all=check_all))

    def not_cited(self, sentence_id: int, sentence: str, earlier: list[str]) -> None:
        """ARGUE's questions of a sentence citing nothing, each asked only where the one before leads to it."""
        if self.job.params.get("negatives") and self.bare(
            NEGATIVE_ASSERTION, sentence_id, SentenceCheck.NEGATIVE, sentence=sentence
        ):
            self.answers(sentence_id, sentence, self.bank.keys())
            return
        needs = self.bare(
            NEEDS_CITATION, sentence_id, SentenceCheck.NEEDS_CITATION, request=self.request, sentence=sentence
        )
        if needs and first_instance_asked(len(earlier)):
            earlier_text = "\n".join(earlier)
            self.bare(
                FIRST_INSTANCE,
                sentence_id,
                SentenceCheck.FIRST_INSTANCE,
                earlier_sentences=earlier_text,
                sentence=sentence,
            )


def _cited_documents(sentence_ids: list[int]) -> dict[int, list[tuple[int, str, str]]]:
    """Each sentence's (citation id, document id, document text), in citation order."""
    citations: dict[int, list[tuple[int, str, str]]] = {}
    for sentence_id, citation_id, docid, text in (
        Citation.objects.filter(sentence_id__in=sentence_ids)
        .order_by("sentence_id", "position")
        .values_list("sentence_id", "pk", "segment_id", "segment__text")
    ):
        citations.setdefault(sentence_id, []).append((citation_id, docid, text))
    return citations


def item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> ReportJudged:
    answer = Answer.objects.get(pk=item.payload["answer"])
    topic_id = answer.topic_id
    sentences = list(Sentence.objects.filter(answer=answer).order_by("index").values_list("pk", "text"))
    kept = sentences_kept(topic_id=topic_id, texts=[text for _, text in sentences])
    questions = bank_questions(job.params["bank"], [topic_id]).get(topic_id)
    if questions is None:
        raise LookupError(f"the bank {job.params['bank']!r} has no counted questions on topic {published_id(topic_id)}")
    request = request_texts([topic_id])[topic_id]
    request_text = " ".join(part for part in (request.title, request.problem_statement) if part)
    judging = _Judging(llm, job, request_text, questions, bank_as_scored(questions))
    citations = _cited_documents([pk for pk, _ in sentences[:kept]])
    for position, (sentence_id, sentence) in enumerate(sentences[:kept]):
        if sentence_id in citations:
            judging.cited(sentence_id, sentence, citations[sentence_id])
        else:
            judging.not_cited(sentence_id, sentence, [text for _, text in sentences[:position]])
    return ReportJudged(
        kept=kept,
        questions=[q.pk for q in questions if q.pk is not None],
        supports=judging.supports,
        agrees=judging.agrees,
        uncited=judging.uncited,
        malformed=judging.malformed,
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
        negatives=bool(job.params.get("negatives")),
        malformed=result.malformed,
        questions=result.questions,
        job=job,
    )
    UncitedAttestation.objects.bulk_create(
        UncitedAttestation(source=source, sentence_id=sentence_id, asked=asked, label=_label(yes), job=job)
        for sentence_id, asked, yes in result.uncited
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
