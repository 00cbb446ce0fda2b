"""The workspace's operations on a question bank's rule and gold answers, beside the ones every list has.

They run like every operation (nuggets.editing: the rows locked, the version checked, a retry recognised,
before and after logged, undo by the log) and touch one question each. An answer's documents are picked
from the topic's documents (`topic_documents`): the segments of its qrels and those its answers cite.
"""

from django.db.models import Q
from django.db.models.functions import Substr

from assessor.models import AnswerReference, Citation, Qrel, Segment
from nuggets import workspace as rules
from nuggets.editing import EditContext, answers_write, rule_clean
from nuggets.models import Nugget

SNIPPET_CHARS = 160


def topic_documents_q(topic_id: str) -> Q:
    """The topic's documents, as segments: those of its qrels and those its answers and reports cite (subqueries,
    so that a topic of thousands of documents is one query)."""
    return (
        Q(pk__in=Qrel.objects.filter(topic_id=topic_id).values("segment_id"))
        | Q(pk__in=AnswerReference.objects.filter(answer__topic_id=topic_id).values("segment_id"))
        | Q(pk__in=Citation.objects.filter(sentence__answer__topic_id=topic_id).values("segment_id"))
    )


def topic_document_texts(topic_id: str) -> list[tuple[str, str, str]]:
    """(doc id, title, text) of the topic's documents, by id: read once, beside a bank's workspace."""
    return list(Segment.objects.filter(topic_documents_q(topic_id)).order_by("pk").values_list("pk", "title", "text"))


def topic_documents(topic_id: str) -> list[tuple[str, str]]:
    """(doc id, snippet) of the topic's documents, by id: what an answer's documents are picked from."""
    # Only the start of each text is read: a panel is drawn after every change, and texts run to pages.
    rows = (
        Segment.objects.filter(topic_documents_q(topic_id))
        .order_by("pk")
        .values_list("pk", Substr("title", 1, SNIPPET_CHARS), Substr("text", 1, SNIPPET_CHARS))
    )
    return [(pk, " ".join(f"{title} {text}".split())[:SNIPPET_CHARS]) for pk, title, text in rows]


def _documents(context: EditContext, params: dict) -> list[str]:
    raw = params.get("documents") or ""
    given = raw.replace(",", " ").split() if isinstance(raw, str) else list(raw)
    asked = list(dict.fromkeys(doc.strip() for doc in given if doc.strip()))[: rules.MAX_ANSWER_DOCUMENTS]
    known = Segment.objects.filter(topic_documents_q(context.work.topic_id), pk__in=asked).values_list("pk", flat=True)
    return rules.documents_clean(given, known=set(known))


def _answer_text(params: dict) -> str:
    try:
        return rules.text_clean(params.get("answer_text", ""))
    except rules.InvalidOperation:
        raise rules.InvalidOperation("An answer needs some text.") from None


def _question(context: EditContext, params: dict) -> Nugget:
    if not context.is_bank:
        raise rules.InvalidOperation("Only a question bank's questions have answers and a rule.")
    return context.nugget(params.get("nugget"))


def _answer_index(context: EditContext, nugget: Nugget, params: dict) -> int:
    try:
        index = int(params.get("answer", ""))
    except ValueError:
        raise rules.InvalidOperation("Choose an answer first.") from None
    if not 0 <= index < len(context.answers.get(nugget.pk, [])):
        raise rules.InvalidOperation("That answer is no longer there: reload the bank.")
    return index


def _done(context: EditContext, nugget: Nugget, before: list[dict]) -> dict:
    return {"before": before, "after_ids": [nugget.pk], "focus_id": nugget.pk}


def _op_rule(context: EditContext, params: dict) -> dict:
    nugget = _question(context, params)
    before = [context.snapshot(nugget)]
    rule = rule_clean(params.get("rule"))
    if rule == nugget.answer_rule:
        raise rules.InvalidOperation("The rule is unchanged.")
    nugget.answer_rule = rule
    nugget.save(update_fields=["answer_rule"])
    return _done(context, nugget, before)


def _op_answer_add(context: EditContext, params: dict) -> dict:
    nugget = _question(context, params)
    before = [context.snapshot(nugget)]
    answers = list(context.answers.get(nugget.pk, []))
    if len(answers) >= rules.MAX_ANSWERS:
        raise rules.CapReached(f"A question holds at most {rules.MAX_ANSWERS} answers.")
    text = _answer_text(params)
    if any(answer["text"] == text for answer in answers):
        raise rules.InvalidOperation("The question already has this answer.")
    answers.append({"text": text, "documents": _documents(context, params)})
    answers_write(context, {nugget.pk: answers})
    if not nugget.answer_rule:
        # A question with an answer is judged by a rule; any answer is the default.
        nugget.answer_rule = Nugget.AnswerRule.OR
        nugget.save(update_fields=["answer_rule"])
    return _done(context, nugget, before)


def _op_answer_edit(context: EditContext, params: dict) -> dict:
    nugget = _question(context, params)
    before = [context.snapshot(nugget)]
    index = _answer_index(context, nugget, params)
    answers = [dict(answer) for answer in context.answers[nugget.pk]]
    text = _answer_text(params)
    if any(answer["text"] == text for position, answer in enumerate(answers) if position != index):
        raise rules.InvalidOperation("The question already has this answer.")
    changed = {"text": text, "documents": _documents(context, params)}
    if changed == answers[index]:
        raise rules.InvalidOperation("The answer is unchanged.")
    answers[index] = changed
    answers_write(context, {nugget.pk: answers})
    return _done(context, nugget, before)


def _op_answer_delete(context: EditContext, params: dict) -> dict:
    nugget = _question(context, params)
    before = [context.snapshot(nugget)]
    index = _answer_index(context, nugget, params)
    answers = [answer for position, answer in enumerate(context.answers[nugget.pk]) if position != index]
    answers_write(context, {nugget.pk: answers})
    return _done(context, nugget, before)


BANK_OPERATIONS = {
    "rule": _op_rule,
    "answer_add": _op_answer_add,
    "answer_edit": _op_answer_edit,
    "answer_delete": _op_answer_delete,
}
