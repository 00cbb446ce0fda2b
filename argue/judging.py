"""People's ARGUE-style judgments: giving the work, the sentence pages, saving one yes/no, submitting, progress.

An assessor judges a topic's reports one sentence at a time: the reports in an order shuffled once per
assessor and topic, each cut to its request's limit (the sentences after the cut are shown, struck, and not
judged), its kept sentences in order. A sentence's page asks ARGUE's questions (argue.metrics says how
they score): of a sentence that cites, for each document it cites, "does it support the sentence?", then, for
the bank's kept gold answers (by default those whose documents the sentence cites; all when the work says so
or the bank is a no-reference one), "does the sentence give this answer?"; of a sentence that cites nothing,
"does it need a citation?" and, when a sentence comes before it, "is it the first instance of its claim?"
(and, with the work's option of negative assertions, "is it a negative assertion?" and every kept gold
answer). A page asks all its questions at once, so a person answers some that the LLM's flow skips (the
answers of a sentence a document does not support, the first instance of one that needs no citation): they
are stored and compared, and score nothing. A sentence with nothing to ask has no page. The pages name a report by a token, never by run or id, and read no judgment but the work's
own source: blind to every LLM's. Saves go through the judging core (assessor.work.judging).
"""

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q

from argue.agreement import ANSWER_ITEM, SUPPORT_ITEM
from argue.cut import sentences_kept
from argue.kinds import ARGUE_FAMILY, ARGUE_WORK
from argue.metrics import answers_to_check, bank_as_scored, first_instance_asked
from argue.models import (
    AnswerAttestation,
    ArgueWork,
    JudgedReport,
    SentenceCheck,
    SupportAttestation,
    UncitedAttestation,
    YesNo,
)
from assessor.models import Answer, AssessorWork, Citation, LabelSource, Segment, Sentence, Topic
from assessor.work.judging import (
    JudgeError,
    Replayed,
    answer_token,
    label_write,
    locked_open_work,
    position_choose,
    shuffled,
)
from assessor.work.kit import WorkProgress, labels_counted_by_work, progress_rows
from assessor.work.services import WorkError, person_source_claim, replicate_source_claim, work_give, work_submit_mark
from nuggets.banks import Question, bank_names, bank_questions
from reports.models import ReportRequest

PEOPLE_SOURCE = "people"  # the source people's judgments go into unless the organizer names another
LABELS = (YesNo.YES.value, YesNo.NO.value)
# What the page asks of a sentence that cites nothing, in the order it asks them.
UNCITED_QUESTIONS: dict[str, str] = {
    SentenceCheck.NEGATIVE: "Is the sentence a negative assertion (that something is not so, or that there is no "
    "evidence or report of it)?",
    SentenceCheck.NEEDS_CITATION: "The sentence cites nothing: does it need a citation (does it make a claim a reader "
    "would want to verify in a source)?",
    SentenceCheck.FIRST_INSTANCE: "Is it the first instance of its claim in the report (no sentence before it made "
    "it)? Counted only where it needs a citation.",
}


# --- giving -----------------------------------------------------------------------------------


def _bank_of(topic: Topic, bank: str) -> str:
    """The bank asked for, or the topic's only counted bank; refused where there is none to judge against."""
    if bank:
        if topic.pk not in bank_questions(bank, [topic.pk]):
            raise WorkError(f"Topic {topic.pk} has no counted questions in the bank {bank!r}.")
        return bank
    found = [name for name in bank_names() if topic.pk in bank_questions(name, [topic.pk])]
    if len(found) != 1:
        raise WorkError(
            f"Topic {topic.pk} has {len(found)} counted question banks ({', '.join(found) or 'none'}): name one."
        )
    return found[0]


@transaction.atomic
def argue_work_give(
    *,
    topic: Topic,
    assessor: User,
    kind: str = ARGUE_WORK,
    by: User | None,
    name: str = "",
    bank: str = "",
    check_all: bool = False,
    negatives: bool = False,
) -> AssessorWork:
    """The registry's `WorkPage.give`: the topic's ARGUE-style work against a bank, into a people's source."""
    bank = _bank_of(topic, bank)
    source = person_source_claim(family=ARGUE_FAMILY, name=name or PEOPLE_SOURCE, by=by)
    work = work_give(topic=topic, assessor=assessor, kind=kind, by=by, source=source, nugget_set_name=bank)
    defaults = {"bank": bank, "check_all": check_all, "negatives": negatives}
    ArgueWork.objects.update_or_create(work=work, defaults=defaults)
    return work


@transaction.atomic
def argue_second_give(*, topic: Topic, assessor: User, by: User | None, of_name: str, name: str) -> AssessorWork:
    """A second assessor's independent judging of the topic's reports as the people's source `of_name` judged
    them (the same bank and questions), into a source of its own, blind to the first's judgments (the pages
    read only their own work's); the first's assessor is refused. `argue_agreement` compares the two."""
    first = (
        AssessorWork.objects.filter(topic=topic, kind=ARGUE_WORK, source__family=ARGUE_FAMILY, source__name=of_name)
        .select_related("source")
        .first()
    )
    if first is None or first.source is None:
        raise WorkError(f"Topic {topic.pk} has no ARGUE-style judging by people into {of_name!r}.")
    if not name or name == of_name:
        raise WorkError(f"A second assessor needs a source name of its own, not {of_name!r}.")
    options = _options(first)
    # Marked a replicate of the first source: the meta-evaluation's second assessors page sets the two people
    # side by side, and beside every LLM source of the family.
    source = replicate_source_claim(family=ARGUE_FAMILY, name=name, of=first.source, by=by)
    return _independent_give(
        topic=topic,
        assessor=assessor,
        by=by,
        source=source,
        blind_to=[first.source],
        bank=options.bank,
        check_all=options.check_all,
        negatives=options.negatives,
    )


def _independent_give(
    *,
    topic: Topic,
    assessor: User,
    by: User | None,
    source: LabelSource,
    blind_to: Sequence[LabelSource],
    bank: str,
    check_all: bool,
    negatives: bool = False,
    items: Sequence[list[int]] = (),
) -> AssessorWork:
    """ARGUE-style work blind to `blind_to`, into its own source, against `bank` (restricted to `items` if given)."""
    work = work_give(
        topic=topic,
        assessor=assessor,
        kind=ARGUE_WORK,
        by=by,
        source=source,
        nugget_set_name=bank,
        blind_to=blind_to,
        items=items,
    )
    defaults = {"bank": bank, "check_all": check_all, "negatives": negatives}
    ArgueWork.objects.update_or_create(work=work, defaults=defaults)
    return work


@transaction.atomic
def argue_study_give(
    *,
    topic: Topic,
    assessor: User,
    by: User | None,
    source: LabelSource,
    blind_to: Sequence[LabelSource],
    items: Sequence[tuple[int, ...]],
    nugget_set: str,
) -> AssessorWork:
    """The disagreement study's `StudyJudging.give`: the topic's sampled judgments (argue.agreement's items), and
    only those, against the bank `nugget_set`, blind to the studied sources. Every gold answer may be asked (a
    sampled one need not be of a cited document), but only the sampled ones are."""
    return _independent_give(
        topic=topic,
        assessor=assessor,
        by=by,
        source=source,
        blind_to=blind_to,
        bank=_bank_of(topic, nugget_set),
        check_all=True,
        items=[list(item) for item in items],
    )


# --- what a topic asks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Cited:
    citation_id: int
    docid: str


@dataclass(frozen=True)
class Document:
    docid: str
    title: str
    text: str


@dataclass(frozen=True)
class PlannedSentence:
    """A kept sentence of a report and what it is asked."""

    answer_id: int
    index: int
    sentence_id: int
    text: str
    cited: tuple[Cited, ...]
    checks: tuple[tuple[int, int], ...]  # (question index in the bank, answer index)
    uncited: tuple[str, ...] = ()  # the SentenceChecks asked of a sentence citing nothing

    @property
    def asks(self) -> int:
        return len(self.cited) + len(self.uncited) + len(self.checks)


@dataclass(frozen=True)
class ReportPlan:
    answer_id: int
    sentences: tuple[str, ...]  # all of them
    kept: int
    planned: tuple[PlannedSentence, ...]  # the kept sentences with something to ask


@dataclass(frozen=True)
class TopicPlan:
    questions: list[Question]
    reports: list[ReportPlan]  # in the assessor's order
    pages: list[PlannedSentence] = field(default_factory=list)  # every sentence page, in order


def _options(work: AssessorWork) -> ArgueWork:
    options = ArgueWork.objects.filter(work=work).first()
    if options is None:
        raise JudgeError("This work names no question bank: ask an organizer to give it again.")
    return options


def sentence_asks(
    cited: Sequence[Cited], position: int, questions: Sequence[Question], *, check_all: bool, negatives: bool
) -> tuple[list[tuple[int, int]], tuple[str, ...]]:
    """The gold answers and the uncited checks a kept sentence's page asks (as the LLM's flow, but all at once)."""
    bank = bank_as_scored(questions)
    if cited:
        return answers_to_check([c.docid for c in cited], bank, check_all=check_all), ()
    uncited = (
        (SentenceCheck.NEGATIVE,) * negatives
        + (SentenceCheck.NEEDS_CITATION,)
        + (SentenceCheck.FIRST_INSTANCE,) * first_instance_asked(position)
    )
    return (bank.keys() if negatives else []), tuple(str(asked) for asked in uncited)


def report_plans(
    *,
    topic_id: str,
    answer_ids: Sequence[int],
    questions: Sequence[Question],
    check_all: bool,
    negatives: bool = False,
) -> list[ReportPlan]:
    """What each report asks, in the order of `answer_ids` (four queries)."""
    request = ReportRequest.objects.filter(pk=topic_id).first()
    limit = request.length_limit if request is not None else None
    texts: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for answer_id, pk, text in (
        Sentence.objects.filter(answer_id__in=answer_ids)
        .order_by("answer_id", "index")
        .values_list("answer_id", "pk", "text")
    ):
        texts[answer_id].append((pk, text))
    cited: dict[int, list[Cited]] = defaultdict(list)
    for sentence_id, pk, docid in (
        Citation.objects.filter(sentence__answer_id__in=answer_ids)
        .order_by("sentence_id", "position")
        .values_list("sentence_id", "pk", "segment_id")
    ):
        cited[sentence_id].append(Cited(pk, docid))
    plans = []
    for answer_id in answer_ids:
        sentences = texts.get(answer_id, [])
        only_texts = [text for _, text in sentences]
        kept = sentences_kept(topic_id=topic_id, texts=only_texts) if limit is not None else len(sentences)
        planned = []
        for index, (pk, text) in enumerate(sentences[:kept]):
            its = tuple(cited.get(pk, ()))
            checks, uncited = sentence_asks(its, index, questions, check_all=check_all, negatives=negatives)
            sentence = PlannedSentence(answer_id, index, pk, text, its, tuple(checks), uncited)
            if sentence.asks:
                planned.append(sentence)
        plans.append(ReportPlan(answer_id, tuple(only_texts), kept, tuple(planned)))
    return plans


def _asked_items(work: AssessorWork) -> set[tuple[int, ...]] | None:
    """The judgments a work restricted to some (a study's sample) asks, as argue.agreement names them; None when
    it asks every judgment of the topic."""
    if not work.items:
        return None
    return {tuple(int(part) for part in item) for item in work.items}


def _restricted(
    reports: list[ReportPlan], questions: Sequence[Question], asked: set[tuple[int, ...]] | None
) -> list[ReportPlan]:
    """The reports with only the asked judgments, and only the sentences and reports left with one."""
    if asked is None:
        return reports
    kept_reports = []
    for report in reports:
        planned = []
        for sentence in report.planned:
            cited = tuple(c for c in sentence.cited if (SUPPORT_ITEM, c.citation_id) in asked)
            checks = tuple(
                (q, a) for q, a in sentence.checks if (ANSWER_ITEM, sentence.sentence_id, questions[q].pk, a) in asked
            )
            # A study samples support and answer judgments only: the uncited checks are not asked again.
            if cited or checks:
                planned.append(replace(sentence, cited=cited, checks=checks, uncited=()))
        if planned:
            kept_reports.append(replace(report, planned=tuple(planned)))
    return kept_reports


def report_order(work: AssessorWork) -> list[int]:
    answer_ids = list(Answer.objects.filter(topic_id=work.topic_id).values_list("pk", flat=True))
    return shuffled(answer_ids, assessor_id=work.assessor_id, topic_id=work.topic_id)


def topic_plan(work: AssessorWork, options: ArgueWork | None = None) -> TopicPlan:
    options = options or _options(work)
    questions = bank_questions(options.bank, [work.topic_id]).get(work.topic_id, [])
    reports = report_plans(
        topic_id=work.topic_id,
        answer_ids=report_order(work),
        questions=questions,
        check_all=options.check_all,
        negatives=options.negatives,
    )
    reports = _restricted(reports, questions, _asked_items(work))
    pages = [sentence for report in reports for sentence in report.planned]
    return TopicPlan(questions=questions, reports=reports, pages=pages)


def support_key(citation_id: int) -> str:
    """A citation's judgment among the work's own (never shown: the page names its row by `row_token`)."""
    return f"c{citation_id}"


def answer_key(question_id: int, answer_index: int) -> str:
    return f"q{question_id}-{answer_index}"


def uncited_key(sentence_id: int, asked: str) -> str:
    return f"u{sentence_id}-{asked}"


def row_token(key: str) -> str:
    """The opaque name of a row (`support_key` or `answer_key`) on the page and in its save, keyed by SECRET_KEY
    like `assessor.work.judging.answer_token`: citation ids follow the import order of reports, so a page showing
    them would tie a report to its run. A save names its row by the token alone; a bare key is no row."""
    return hashlib.sha256(f"{settings.SECRET_KEY}:argue-row:{key}".encode()).hexdigest()[:20]


def _given(work: AssessorWork, sentence_ids: Sequence[int] | None = None) -> dict[str, str]:
    """Row key -> label, of the work's source's judgments (of some sentences, or all of the topic's)."""
    supports = SupportAttestation.objects.filter(
        source_id=work.source_id, citation__sentence__answer__topic_id=work.topic_id
    )
    answers = AnswerAttestation.objects.filter(source_id=work.source_id, sentence__answer__topic_id=work.topic_id)
    uncited = UncitedAttestation.objects.filter(source_id=work.source_id, sentence__answer__topic_id=work.topic_id)
    if sentence_ids is not None:
        supports = supports.filter(citation__sentence_id__in=sentence_ids)
        answers = answers.filter(sentence_id__in=sentence_ids)
        uncited = uncited.filter(sentence_id__in=sentence_ids)
    given = {support_key(citation): label for citation, label in supports.values_list("citation_id", "label") if label}
    given.update(
        (f"s{sentence}:" + answer_key(question, index), label)
        for sentence, question, index, label in answers.values_list(
            "sentence_id", "question_id", "answer_index", "label"
        )
    )
    given.update(
        (uncited_key(sentence, asked), label)
        for sentence, asked, label in uncited.values_list("sentence_id", "asked", "label")
    )
    return given


def _row_labels(sentence: PlannedSentence, questions: Sequence[Question], given: dict[str, str]) -> list[str]:
    labels = [given.get(support_key(cited.citation_id), "") for cited in sentence.cited]
    labels += [given.get(uncited_key(sentence.sentence_id, asked), "") for asked in sentence.uncited]
    for question_index, answer_index in sentence.checks:
        question_id = questions[question_index].pk
        labels.append(given.get(f"s{sentence.sentence_id}:" + answer_key(question_id or 0, answer_index), ""))
    return labels


# --- the page ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    key: str
    kind: str  # "support", "uncited" or "answer"
    label: str
    document: Document | None = None
    question: str = ""
    gold_answer: str = ""
    importance: str = ""


@dataclass(frozen=True)
class SentencePage:
    number: int  # 1-based position of the sentence page in the assessor's order
    total_answers: int  # the frame's name for the number of pages: here, sentence pages
    answers_done: int  # sentence pages with every row labelled
    next_incomplete: int | None
    frozen: bool
    token: str  # the report's
    index: int  # the sentence's index in its report
    report_number: int
    report_total: int
    sentences: tuple[str, ...]  # the report's sentences
    kept: int  # how many the limit keeps
    rows: tuple[Row, ...]
    labels_done: int
    labels_total: int
    waiting: str = ""
    postedit: bool = False

    @property
    def answer_complete(self) -> bool:
        return all(row.label for row in self.rows)

    @property
    def shown(self) -> list[tuple[int, str, str]]:
        """(index, text, state) of each sentence of the report: "current", "kept" or "cut"."""
        return [
            (index, text, "current" if index == self.index else "kept" if index < self.kept else "cut")
            for index, text in enumerate(self.sentences)
        ]

    @property
    def focus(self) -> str:
        """The row selected first: the first without an answer."""
        return next((row.key for row in self.rows if not row.label), "")

    @property
    def support_rows(self) -> list[Row]:
        return [row for row in self.rows if row.kind == "support"]

    @property
    def answer_rows(self) -> list[Row]:
        return [row for row in self.rows if row.kind == "answer"]


def _page_rows(sentence: PlannedSentence, questions: Sequence[Question], current: list[str]) -> list[Row]:
    """A sentence page's rows, in the order `_row_labels` reads their labels: cited documents, uncited checks,
    gold answers."""
    # Only this sentence's documents are read whole.
    texts = {
        docid: Document(docid, title, text)
        for docid, title, text in Segment.objects.filter(pk__in=[c.docid for c in sentence.cited]).values_list(
            "pk", "title", "text"
        )
    }
    rows = [
        Row(
            row_token(support_key(cited.citation_id)),
            "support",
            label,
            document=texts.get(cited.docid, Document(cited.docid, "", "")),
        )
        for cited, label in zip(sentence.cited, current, strict=False)
    ]
    before = len(sentence.cited) + len(sentence.uncited)
    rows += [
        Row(row_token(uncited_key(sentence.sentence_id, asked)), "uncited", label, question=UNCITED_QUESTIONS[asked])
        for asked, label in zip(sentence.uncited, current[len(sentence.cited) : before], strict=True)
    ]
    for (question_index, answer_index), label in zip(sentence.checks, current[before:], strict=True):
        question = questions[question_index]
        rows.append(
            Row(
                row_token(answer_key(question.pk or 0, answer_index)),
                "answer",
                label,
                question=question.text,
                gold_answer=question.answers[answer_index].text,
                importance=question.importance,
            )
        )
    return rows


def sentence_page_load(*, work: AssessorWork, number: int | None = None) -> SentencePage | None:
    """The page of sentence `number` (or of the first with a question unanswered); None if there is none."""
    plan = topic_plan(work)
    given = _given(work)
    labels = [_row_labels(sentence, plan.questions, given) for sentence in plan.pages]
    done = [sum(1 for label in row if label) for row in labels]
    position = position_choose(done_counts=done, needed=[len(row) for row in labels], number=number)
    if position is None:
        return None
    sentence = plan.pages[position.number - 1]
    report_number, report = next(
        (n, report) for n, report in enumerate(plan.reports, start=1) if report.answer_id == sentence.answer_id
    )
    rows = _page_rows(sentence, plan.questions, labels[position.number - 1])
    return SentencePage(
        number=position.number,
        total_answers=len(plan.pages),
        answers_done=sum(1 for row in labels if all(row)),
        next_incomplete=position.next_incomplete,
        frozen=work.status == AssessorWork.Status.SUBMITTED,
        token=answer_token(sentence.answer_id),
        index=sentence.index,
        report_number=report_number,
        report_total=len(plan.reports),
        sentences=report.sentences,
        kept=report.kept,
        rows=tuple(rows),
        labels_done=sum(done),
        labels_total=sum(len(row) for row in labels),
    )


# --- saving ---------------------------------------------------------------------------------------


def _report_of(work: AssessorWork, token: str | None) -> int:
    for answer_id in Answer.objects.filter(topic_id=work.topic_id).values_list("pk", flat=True):
        if answer_token(answer_id) == token:
            return answer_id
    raise JudgeError("The topic's reports changed since the page was loaded: reload it.", status=409)


def _sentence_asked(
    work: AssessorWork, token: str | None, sentence_index: int
) -> tuple[int, list[Question], PlannedSentence]:
    """The report the page's token names, the bank's questions, and the report's sentence `sentence_index` as this
    work asks it; refused where the report's limit cuts it or the work asks nothing of it."""
    options = _options(work)
    answer_id = _report_of(work, token)
    questions = bank_questions(options.bank, [work.topic_id]).get(work.topic_id, [])
    reports = report_plans(
        topic_id=work.topic_id,
        answer_ids=[answer_id],
        questions=questions,
        check_all=options.check_all,
        negatives=options.negatives,
    )
    planned = [
        sentence for report in _restricted(reports, questions, _asked_items(work)) for sentence in report.planned
    ]
    sentence = next((s for s in planned if s.index == sentence_index), None)
    if sentence is None:
        raise JudgeError(
            "This sentence is not judged here (the report's limit cuts it, or it asks nothing of this work)."
        )
    return answer_id, questions, sentence


@transaction.atomic
def argue_save(
    *,
    work_id: int,
    user: User,
    sentence_index: int,
    row: str,
    label: str,
    previous: str,
    expected_version: int | None,
    token: str | None,
    op_id: str = "",
) -> SupportAttestation | AnswerAttestation | UncitedAttestation | Replayed:
    """One yes/no of a sentence page: `row` is the token (`row_token`) of a cited document, of an uncited check or
    of a gold answer the sentence is asked about."""
    if label not in LABELS:
        raise JudgeError("A judgment is yes or no.")
    work = locked_open_work(work_id=work_id, user=user, kinds=[ARGUE_WORK], expected_version=expected_version)
    source_id = work.source_id
    if source_id is None:
        raise JudgeError("This work has no label source: ask an organizer to give it again.")
    answer_id, questions, sentence = _sentence_asked(work, token, sentence_index)

    def write(existing: Any, create: Callable[[float], Any]) -> Any:
        return label_write(
            work=work,
            existing=existing,
            empty="",
            value=label,
            previous=previous if previous in LABELS else "",
            conflict=lambda current: "This judgment was changed in another tab: reload.",
            create=create,
            item=f"{answer_id}:{sentence_index}:{row}",
            op_id=op_id,
        )

    made = {"source_id": source_id, "label": label, "work": work, "created_by": user}
    citation_id = next((c.citation_id for c in sentence.cited if row == row_token(support_key(c.citation_id))), None)
    if citation_id is not None:
        return write(
            SupportAttestation.objects.select_for_update().filter(source_id=source_id, citation_id=citation_id).first(),
            lambda seconds: SupportAttestation.objects.create(citation_id=citation_id, seconds_spent=seconds, **made),
        )
    uncited = {row_token(uncited_key(sentence.sentence_id, asked)): asked for asked in sentence.uncited}
    if row in uncited:
        asked_here = {"sentence_id": sentence.sentence_id, "asked": uncited[row]}
        return write(
            UncitedAttestation.objects.select_for_update().filter(source_id=source_id, **asked_here).first(),
            lambda seconds: UncitedAttestation.objects.create(seconds_spent=seconds, **asked_here, **made),
        )
    asked = {row_token(answer_key(questions[q].pk or 0, a)): (questions[q].pk or 0, a) for q, a in sentence.checks}
    if row not in asked:
        raise JudgeError("This sentence is not asked that (reload the page).")
    question_id, answer_index = asked[row]
    its = {"sentence_id": sentence.sentence_id, "question_id": question_id, "answer_index": answer_index}
    return write(
        AnswerAttestation.objects.select_for_update().filter(source_id=source_id, **its).first(),
        lambda seconds: AnswerAttestation.objects.create(seconds_spent=seconds, **its, **made),
    )


@transaction.atomic
def argue_submit(*, work_id: int, user: User, expected_version: int | None) -> None:
    """Every question of every page answered, then each report of the topic is recorded as judged (with its cut
    and the bank) and the work submitted."""
    work = locked_open_work(work_id=work_id, user=user, kinds=[ARGUE_WORK], expected_version=expected_version)
    options = _options(work)
    plan = topic_plan(work, options)
    given = _given(work)
    missing = sum(1 for sentence in plan.pages for label in _row_labels(sentence, plan.questions, given) if not label)
    if missing:
        raise WorkError(f"{missing} question(s) on this topic's sentences have no answer yet.")
    for report in plan.reports:
        JudgedReport.objects.update_or_create(
            source_id=work.source_id,
            answer_id=report.answer_id,
            defaults={
                "work": work,
                "bank": options.bank,
                "kept": report.kept,
                "check_all": options.check_all,
                "negatives": options.negatives,
                "questions": [q.pk for q in plan.questions if q.pk is not None],
                "created_by": user,
            },
        )
    work_submit_mark(work=work, user=user)


# --- progress --------------------------------------------------------------------------------------


def argue_progress(works: Sequence[AssessorWork]) -> dict[int, tuple[int, int]]:
    """The registry's `WorkPage.progress`: questions answered of the questions the topic's sentences ask."""
    progress = {}
    done = Counter(labels_counted_by_work(SupportAttestation, works, given=~Q(label="")))
    done.update(labels_counted_by_work(AnswerAttestation, works))
    done.update(labels_counted_by_work(UncitedAttestation, works))
    for work in works:
        try:
            plan = topic_plan(work)
        except JudgeError:
            progress[work.pk] = (0, 0)
            continue
        progress[work.pk] = (done.get(work.pk, 0), sum(sentence.asks for sentence in plan.pages))
    return progress


def organizer_progress() -> list[WorkProgress]:
    return progress_rows(
        kinds=[ARGUE_WORK], progress=argue_progress, models=[SupportAttestation, AnswerAttestation, UncitedAttestation]
    )


@dataclass
class SentenceDetail:
    number: int
    run: str  # the organizer may see runs
    index: int
    asks: int
    answered: int
    yes: int
    seconds: float
    time_label: str = ""


def work_detail(work: AssessorWork) -> list[SentenceDetail]:
    """One work's sentence pages in the assessor's order, with the runs (for the organizer), answers and time."""
    plan = topic_plan(work)
    runs = dict(Answer.objects.filter(topic_id=work.topic_id).values_list("pk", "run__run_id"))
    given = _given(work)
    seconds: dict[int, float] = defaultdict(float)
    for sentence_id, spent in SupportAttestation.objects.filter(work=work).values_list(
        "citation__sentence_id", "seconds_spent"
    ):
        seconds[sentence_id] += spent or 0.0
    for model in (AnswerAttestation, UncitedAttestation):
        for sentence_id, spent in model.objects.filter(work=work).values_list("sentence_id", "seconds_spent"):
            seconds[sentence_id] += spent or 0.0
    rows = []
    for number, sentence in enumerate(plan.pages, start=1):
        labels = _row_labels(sentence, plan.questions, given)
        rows.append(
            SentenceDetail(
                number,
                runs[sentence.answer_id],
                sentence.index,
                sentence.asks,
                sum(1 for label in labels if label),
                sum(1 for label in labels if label == "yes"),
                seconds[sentence.sentence_id],
            )
        )
    return rows
