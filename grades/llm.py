"""Grades by an LLM, as PrefNugget's grading phase makes them: every report of a topic against every
question of a chosen bank, one call each.

A job item is one (report, question): one call, so that the engine keeps as many calls in flight as the
endpoint allows (an item per report would serialise its bank's calls). The passage is the report's text
(its sentences joined by one space); with `documents`, it is each document the report cites instead, one
call per document, and the question's grade is the highest of them (the reference's document grading).
With `report_and_documents` (the reference's `grade_text: response_and_documents`) the report is graded, and
where its grade reaches the job's `gate` each document it cites is graded too, the highest kept as the
`document_grade` (0 where the gate was not reached: no document is asked); the scores read the product of the
two (grades.scoring). Every call sends the one grading prompt, as the reference does in each of its modes.
The answer is read as the reference's converter reads it (`grade_answer_read`).

A bank changed after an LLM graded it leaves the source stale on the changed questions (grades.dependents);
`grades_rerun_create` grades just those, of the reports the source graded, as the source's own model and prompt.
"""

from collections import defaultdict
from dataclasses import dataclass, replace

from django.contrib.auth.models import User

from assessor.jobs.engine import (
    OPEN_STATUSES,
    JobRequestInvalid,
    job_create,
    job_prompt,
    job_source,
    output_name_check,
)
from assessor.jobs.llm.client import LLMConfig, LLMSession
from assessor.jobs.llm.prompts import prompt_messages
from assessor.jobs.selection import runs_select, topics_select
from assessor.models import Answer, AnswerReference, Job, JobItem, LabelSource, PromptTemplate
from grades.dependents import stale_questions, stale_reports, stale_settle
from grades.kinds import GRADES, GRADES_FAMILY
from grades.measures import grade_read
from grades.models import GradeLabel
from grades.prompts import GRADE
from nuggets.banks import bank_questions
from nuggets.models import Nugget
from reports.chat_layout import answer_field, answer_float, answer_sections
from reports.models import ReportDocument


@dataclass(frozen=True)
class Reading:
    grade: int
    confidence: float | None
    reasoning: str
    document: str = ""  # graded documents: the one that gave the grade
    document_grade: int | None = None  # the report with its documents: that document's grade


def grade_answer_read(raw: str) -> Reading:
    """An answer's grade: the first digit 0-5 of its `grade` section, 0 when it names none. An answer without
    that section, or with it empty, is unusable (asked again), as the reference refuses an empty grade."""
    return Reading(
        grade_read(answer_field(raw, "grade")),
        answer_float(raw, "confidence"),
        answer_sections(raw).get("reasoning", ""),
    )


@dataclass(frozen=True)
class PlannedGrade:
    topic_id: str
    run_id: str
    answer: int
    nugget: int
    question_id: str  # the AutoJudge tools' id (md5 of the text)

    @property
    def key(self) -> str:
        return f"{self.topic_id}|{self.run_id}|{self.nugget}"


def grades_select(*, bank: str, topics: list[str] | None = None, runs: list[str] | None = None) -> list[PlannedGrade]:
    """What a job of this selection would grade, topic by topic, run by run, question by question (raises
    JobRequestInvalid for an unknown id or a bank no selected topic has)."""
    topic_ids = [topic.id for topic in topics_select(topics)]
    selected_runs = runs_select(runs)
    banks = bank_questions(bank, topic_ids)
    if not any(banks.values()):
        raise JobRequestInvalid(f"no topic of the selection has a counted bank {bank!r} with questions")
    rows = Answer.objects.filter(topic_id__in=list(banks), run__in=selected_runs)
    answers: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for topic_id, run_id, answer_id in rows.values_list("topic_id", "run__run_id", "pk"):
        answers[topic_id].append((run_id, answer_id))
    planned = []
    for topic_id, questions in banks.items():
        for run_id, answer_id in sorted(answers.get(topic_id, [])):
            for question in questions:
                assert question.pk is not None  # stored questions
                planned.append(PlannedGrade(topic_id, run_id, answer_id, question.pk, question.question_id))
    return planned


# The reference's grade_threshold when its job names none (its gate in the report-with-documents mode).
DEFAULT_GATE = 4


def passage_params(*, documents: bool, report_and_documents: bool, gate: int) -> dict:
    """What a job grades, as its params keep it: the report, its cited documents instead, or the report with
    its cited documents past a gate (raises JobRequestInvalid for two of them, or a gate outside 0-5)."""
    if documents and report_and_documents:
        raise JobRequestInvalid("grade the cited documents instead of the report, or with it: not both")
    if not 0 <= gate <= 5:
        raise JobRequestInvalid(f"the gate is a grade from 0 to 5, not {gate}")
    if report_and_documents:
        return {"documents": False, "report_and_documents": True, "gate": gate}
    return {"documents": documents}


def grades_job_create(
    *,
    name: str,
    bank: str,
    topics: list[str] | None = None,
    runs: list[str] | None = None,
    documents: bool = False,
    report_and_documents: bool = False,
    gate: int = DEFAULT_GATE,
    user: User | None = None,
    queue: str | None = None,
    config: LLMConfig | None = None,
    endpoint: str | None = None,
) -> Job:
    passage = passage_params(documents=documents, report_and_documents=report_and_documents, gate=gate)
    output_name_check(
        kind=GRADES,
        name=name,
        taken=LabelSource.objects.filter(family=GRADES_FAMILY, name=name).exists(),
        family=GRADES_FAMILY,
    )
    planned = grades_select(bank=bank, topics=topics, runs=runs)
    items = [
        (grade.key, {"topic": grade.topic_id, "answer": grade.answer, "nugget": grade.nugget}) for grade in planned
    ]
    params = {"bank": bank, "runs": runs or [], "topics": topics or [], **passage, "queue": queue or ""}
    return job_create(
        kind=GRADES,
        output_name=name,
        params=params,
        items=items,
        prompts=[GRADE.name],
        user=user,
        config=config,
        endpoint=endpoint,
        family=GRADES_FAMILY,
    )


def grades_rerun_create(
    *, name: str, user: User | None = None, queue: str | None = None, config: LLMConfig | None = None
) -> Job:
    """Grade again what a change of the banks took from an LLM grade source: the changed questions still in their
    bank, of each report the source graded there, that have no grade yet. The endpoint, model and prompt must be
    the source's (its grades stay one judge's), and so is the choice of passage (the report, its documents, or both
    past the source's gate); calls already made are answered from the cache."""
    source = LabelSource.objects.filter(family=GRADES_FAMILY, name=name).first()
    if source is None or source.kind != LabelSource.Kind.LLM:
        raise JobRequestInvalid(f"{name!r} is not an LLM grade source")
    running = Job.objects.filter(kind=GRADES, output_name=name, status__in=OPEN_STATUSES).first()
    if running is not None:  # its grades would be asked twice
        raise JobRequestInvalid(f"job {running.pk} still grades into {name!r}: wait for it to finish")
    # A mark whose questions were all removed since, or graded meanwhile, is cleared here rather than asked for.
    for bank, topics in list(source.stale.items()):
        for topic_id in list(topics):
            stale_settle(source, bank, topic_id)
    source.refresh_from_db()
    if not source.stale:
        raise JobRequestInvalid(f"the LLM grades {name!r} are up to date: nothing to grade again")
    items = []
    for bank, topics in sorted(source.stale.items()):
        for topic_id in sorted(topics):
            questions = stale_questions(source, bank, topic_id)
            graded = set(
                GradeLabel.objects.filter(source=source, nugget_id__in=questions).values_list("answer_id", "nugget_id")
            )
            items += [
                (PlannedGrade(topic_id, run_id, answer_id, nugget, "").key, {
                    "topic": topic_id, "answer": answer_id, "nugget": nugget, "bank": bank,
                })
                for run_id, answer_id in stale_reports(source, bank, topic_id)
                for nugget in questions
                if (answer_id, nugget) not in graded
            ]  # fmt: skip
    made = source.job.params if source.job is not None else {}
    passage = {key: made[key] for key in ("documents", "report_and_documents", "gate") if key in made}
    params = {"rerun": True, "stale": source.stale, "documents": False, **passage, "queue": queue or ""}
    return job_create(
        kind=GRADES,
        output_name=name,
        params=params,
        items=items,
        prompts=[GRADE.name],
        user=user,
        config=config,
        endpoint=source.endpoint_name or None,
        family=GRADES_FAMILY,
        owns_output=False,  # it adds to the output of the job that made the source
    )


def cited_documents(answer_id: int) -> list[tuple[str, str]]:
    """The documents a report cites, in its reference order, with the text its file gave (the collection's
    segment text where it gave none)."""
    given = dict(ReportDocument.objects.filter(answer_id=answer_id).values_list("segment_id", "text"))
    documents = []
    for docid, text in AnswerReference.objects.filter(answer_id=answer_id).values_list("segment_id", "segment__text"):
        documents.append((docid, (given.get(docid) or text).strip()))
    return documents


def item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> Reading:
    question = Nugget.objects.values_list("text", flat=True).get(pk=item.payload["nugget"])
    prompt = job_prompt(job, GRADE.name)
    if job.params.get("documents"):
        return _best_document(prompt, question, item.payload["answer"], llm)
    passage = Answer.objects.values_list("text", flat=True).get(pk=item.payload["answer"])
    report = llm.ask(prompt, prompt_messages(prompt, question=question, passage=passage), grade_answer_read)
    if not job.params.get("report_and_documents"):
        return report
    if report.grade < job.params["gate"]:  # the reference asks no document of a question below its gate
        return replace(report, document_grade=0)
    best = _best_document(prompt, question, item.payload["answer"], llm)
    return replace(report, document=best.document, document_grade=best.grade)


def _best_document(prompt: PromptTemplate, question: str, answer_id: int, llm: LLMSession) -> Reading:
    """Each cited document graded on the question: the highest grade, the first document reaching it (the
    reference keeps the first of equal grades); 0 for a report that cites none."""
    best = Reading(0, None, "The report cites no document.")
    for docid, text in cited_documents(answer_id):
        reading = llm.ask(prompt, prompt_messages(prompt, question=question, passage=text), grade_answer_read)
        if not best.document or reading.grade > best.grade:
            best = Reading(reading.grade, reading.confidence, reading.reasoning, docid)
    return best


def item_store(*, job: Job, item: JobItem, result: Reading) -> None:
    GradeLabel.objects.create(
        source=job_source(job, GRADES_FAMILY),
        topic_id=item.payload["topic"],
        answer_id=item.payload["answer"],
        nugget_id=item.payload["nugget"],
        label=result.grade,
        confidence=result.confidence,
        reasoning=result.reasoning,
        document=result.document,
        document_grade=result.document_grade,
        job=job,
    )
    if job.params.get("rerun"):
        stale_settle(job_source(job, GRADES_FAMILY), item.payload["bank"], item.payload["topic"])
