"""Giving nugget work: a topic's ManualNuggets or AutoNuggets+Edits, with the nugget set it opens, and the caps."""

from django.contrib.auth.models import User
from django.db import transaction

from assessor.models import AssessorWork, Topic
from assessor.work.services import WorkError, person_source_claim, work_give
from nuggets.kinds import BANK_AUTO_EDIT, BANK_MANUAL, LABEL_FAMILY, NUGGETS_AUTO_EDIT, NUGGETS_MANUAL
from nuggets.lifecycle import nugget_sets_counted_q
from nuggets.models import GoldAnswer, Nugget, NuggetSet

NIST_SOURCE = "nist"
Through = Nugget.derived_from.through

CONDITION_KINDS: dict[str, str] = {
    NuggetSet.Kind.MANUAL: NUGGETS_MANUAL,
    NuggetSet.Kind.AUTO_EDIT: NUGGETS_AUTO_EDIT,
}
# The work that makes a question bank, by the bank's kind: written from scratch, or post-edited from an LLM's.
BANK_WORK_KINDS: dict[str, str] = {
    NuggetSet.Kind.MANUAL: BANK_MANUAL,
    NuggetSet.Kind.AUTO_EDIT: BANK_AUTO_EDIT,
}
BANK_NAMES: dict[str, str] = {NuggetSet.Kind.MANUAL: "bank", NuggetSet.Kind.AUTO_EDIT: "bank_auto_edit"}
# An LLM's bank to post-edit: drafts, or a finished LLM bank (PrefNugget's, the query-only bank).
BANK_DRAFT_KINDS = (NuggetSet.Kind.DRAFT, NuggetSet.Kind.AUTO)
# What the organizer's give page offers: (set kind, form) by choice.
GIVE_CHOICES: dict[str, tuple[str, str]] = {
    NuggetSet.Kind.MANUAL: (NuggetSet.Kind.MANUAL, NuggetSet.Form.FACTS),
    NuggetSet.Kind.AUTO_EDIT: (NuggetSet.Kind.AUTO_EDIT, NuggetSet.Form.FACTS),
    "bank": (NuggetSet.Kind.MANUAL, NuggetSet.Form.QUESTIONS),
    "bank_auto_edit": (NuggetSet.Kind.AUTO_EDIT, NuggetSet.Form.QUESTIONS),
}


def nugget_cap(kind: str) -> int:
    """ManualNuggets: the protocol's 20. Post-editing starts from 30 drafts, so the list may hold 30 while editing."""
    return NuggetSet.MAX_NUGGETS if kind == NuggetSet.Kind.MANUAL else NuggetSet.MAX_DRAFTS


def submit_cap(kind: str) -> int:
    """A submitted list holds at most 20 nuggets in both conditions (NIST's post-edited lists have 7 to 20)."""
    return NuggetSet.MAX_NUGGETS


# --- Giving work ------------------------------------------------------------


@transaction.atomic
def nugget_work_give(
    *,
    topic: Topic,
    assessor: User,
    condition: str,
    by: User | None,
    name: str = "",
    drafts_name: str = "",
    form: str = NuggetSet.Form.FACTS,
) -> AssessorWork:
    """Give a topic to an assessor for ManualNuggets or AutoNuggets+Edits, and open its nugget set.

    Post-editing starts from a copy of the drafts, each one `kept` and derived
    from its draft; the drafts are the set named `drafts_name`, or the topic's
    newest draft set. With `form="questions"` the work makes a question bank
    instead (a bank written from scratch, or a copy of an LLM's bank, drafts or
    finished, with its answers: the counted bank named `drafts_name`, which is
    needed when the topic has several), and never counts as a nugget condition.
    """
    if condition not in CONDITION_KINDS:
        raise WorkError(f"Unknown condition {condition!r}: choose manual or auto_edit.")
    bank = form == NuggetSet.Form.QUESTIONS
    name = name or (BANK_NAMES[condition] if bank else condition)
    if NuggetSet.objects.filter(topic=topic, name=name).exists():
        raise WorkError(f"Topic {topic.pk} already has a nugget set named {name!r}: choose another name.")
    drafts = (
        _drafts_find(topic=topic, form=form, drafts_name=drafts_name) if condition == NuggetSet.Kind.AUTO_EDIT else None
    )
    source = person_source_claim(family=LABEL_FAMILY, name=name, by=by)
    work_kind = BANK_WORK_KINDS[condition] if bank else CONDITION_KINDS[condition]
    work = work_give(topic=topic, assessor=assessor, kind=work_kind, by=by, nugget_set_name=name, source=source)
    nugget_set = NuggetSet.objects.create(
        topic=topic,
        kind=condition,
        name=name,
        form=form,
        source=source,
        drafts=drafts,
        status=NuggetSet.Status.OPEN,
        created_by=assessor,
        seconds_spent=0,
    )
    if drafts is not None:
        _drafts_copy(drafts=drafts, nugget_set=nugget_set, assessor=assessor)
    return work


def _drafts_find(*, topic: Topic, form: str, drafts_name: str) -> NuggetSet:
    """The LLM's set a post-edit starts from: the set named `drafts_name`, or the topic's newest draft set (facts).

    A bank post-edit starts from a counted LLM bank; with no name, from the topic's only one: where there are
    several, which one the assessor reads is the organizer's choice, never a silent default.
    """
    if form == NuggetSet.Form.QUESTIONS:
        return _bank_drafts_find(topic=topic, drafts_name=drafts_name)
    candidates = NuggetSet.objects.filter(topic=topic, kind=NuggetSet.Kind.DRAFT, form=form)
    if drafts_name:
        candidates = candidates.filter(name=drafts_name)
    drafts = candidates.order_by("-created_at", "-id").first()
    if drafts is None:
        wanted = f"named {drafts_name!r} " if drafts_name else ""
        raise WorkError(
            f"Topic {topic.pk} has no draft nuggets {wanted}to post-edit: import draft nuggets for it "
            "or generate them with an AutoNuggets job first."
        )
    return drafts


def _bank_drafts_find(*, topic: Topic, drafts_name: str) -> NuggetSet:
    candidates = NuggetSet.objects.filter(topic=topic, kind__in=BANK_DRAFT_KINDS, form=NuggetSet.Form.QUESTIONS).filter(
        nugget_sets_counted_q()
    )
    if drafts_name:
        candidates = candidates.filter(name=drafts_name)
    found = list(candidates.order_by("name")[:2])
    if not found:
        wanted = f"named {drafts_name!r} " if drafts_name else ""
        raise WorkError(
            f"Topic {topic.pk} has no LLM question bank {wanted}to post-edit (a submitted one, not being made by a "
            "job): import one (import_banks) or make one with a bank job first."
        )
    if len(found) > 1:
        names = ", ".join(sorted(candidates.values_list("name", flat=True)))
        raise WorkError(f"Topic {topic.pk} has several LLM question banks ({names}): choose the one to post-edit.")
    return found[0]


def _drafts_copy(*, drafts: NuggetSet, nugget_set: NuggetSet, assessor: User) -> None:
    """Copy the drafts into the set being post-edited, each copy `kept` and derived from its draft."""
    bank = nugget_set.form == NuggetSet.Form.QUESTIONS
    draft_nuggets = list(drafts.nuggets.order_by("position", "id"))
    copies = Nugget.objects.bulk_create(
        [
            Nugget(
                nugget_set=nugget_set,
                position=index,
                text=draft.text,
                # Fact drafts reach the assessor without importance; a bank's questions keep theirs and their rule.
                importance=draft.importance if bank else "",
                answer_rule=draft.answer_rule if bank else "",
                origin=Nugget.Origin.KEPT,
                created_by=assessor,
                seconds_spent=0,
            )
            for index, draft in enumerate(draft_nuggets)
        ]
    )
    Through.objects.bulk_create(
        [
            Through(from_nugget_id=copy.pk, to_nugget_id=draft.pk)
            for copy, draft in zip(copies, draft_nuggets, strict=False)
        ]
    )
    if bank:
        copy_of = {draft.pk: copy for copy, draft in zip(copies, draft_nuggets, strict=True)}
        GoldAnswer.objects.bulk_create(
            GoldAnswer(nugget=copy_of[answer.nugget_id], position=answer.position, text=answer.text,
                       documents=list(answer.documents))
            for answer in GoldAnswer.objects.filter(nugget__nugget_set=drafts).order_by("nugget_id", "position")
        )  # fmt: skip
