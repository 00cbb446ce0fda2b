"""People's preferences: giving the work, the pair pages, saving one preference, submitting, progress.

An assessor judges the pairs PrefNugget samples of a topic (`sampling.report_pairs`), each shown as
the sampling report on the left (passage 1) and its partner on the right, in an order shuffled once per
assessor and topic. The pages name a pair by its position and a token, never by run or answer id, and
show no LLM's preference. Saves go through the judging core (assessor.work.judging): the work locked and
checked open at the page's version, replays and changes in another tab handled, the active time credited.
"""

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q

from assessor.models import Answer, AssessorWork, Sentence, Topic
from assessor.work.judging import JudgeError, Replayed, label_write, locked_open_work, position_choose, shuffled
from assessor.work.kit import WorkProgress, labels_counted_by_work, progress_rows
from assessor.work.services import WorkError, person_source_claim, work_give, work_submit_mark
from preferences.kinds import PREFERENCE_WORK, PREFERENCES_FAMILY
from preferences.models import Preference, PreferenceLabel
from preferences.pairs import planned_pairs

PEOPLE_SOURCE = "people"  # the source people's preferences go into unless the organizer names another
Pair = tuple[int, int]  # (left answer id, right answer id)


def preference_work_give(
    *, topic: Topic, assessor: User, kind: str = PREFERENCE_WORK, by: User | None, name: str = ""
) -> AssessorWork:
    """The registry's `WorkPage.give`: the topic's preference work, into a people's source."""
    source = person_source_claim(family=PREFERENCES_FAMILY, name=name or PEOPLE_SOURCE, by=by)
    return work_give(topic=topic, assessor=assessor, kind=kind, by=by, source=source)


def topic_pairs(topic_id: str) -> list[Pair]:
    """The topic's compared pairs, as answer ids, in the sampling's order (passage 1 first)."""
    return [(pair.first, pair.second) for pair in planned_pairs(topic_ids=[topic_id])]


def pair_order(work: AssessorWork) -> list[Pair]:
    """The pairs in the order this assessor sees them."""
    pairs = topic_pairs(work.topic_id)
    order = shuffled(list(range(len(pairs))), assessor_id=work.assessor_id, topic_id=work.topic_id)
    return [pairs[index] for index in order]


def pair_token(pair: Pair) -> str:
    """An opaque name of a pair for the page (see `assessor.work.judging.answer_token`): a save names the
    pair it was made on, so that one made before the topic's reports changed is refused."""
    return hashlib.sha256(f"{settings.SECRET_KEY}:judge-pair:{pair[0]}:{pair[1]}".encode()).hexdigest()[:20]


def pair_at(*, order: Sequence[Pair], number: int, token: str | None) -> Pair:
    if not 1 <= number <= len(order):
        raise JudgeError("No such pair.")
    pair = order[number - 1]
    if token and token != pair_token(pair):
        raise JudgeError("The topic's reports changed since the page was loaded: reload it.", status=409)
    return pair


def _given(work: AssessorWork, pairs: Sequence[Pair]) -> dict[Pair, int]:
    """The preferences this work's source holds for the pairs (a tie is 0)."""
    rows = PreferenceLabel.objects.filter(source=work.source, topic_id=work.topic_id, label__isnull=False)
    wanted = set(pairs)
    return {
        (first, second): label
        for first, second, label in rows.values_list("first_id", "second_id", "label")
        if (first, second) in wanted and label is not None
    }


@dataclass(frozen=True)
class PairPage:
    number: int  # 1-based position of the pair in the assessor's order
    total_answers: int  # the frame's name for the number of pages: here, pairs
    answers_done: int  # pairs with a preference
    next_incomplete: int | None
    frozen: bool
    token: str
    left: list[str]  # the sentences of the report on the left (passage 1)
    right: list[str]
    current: str  # the stored preference as the page posts it ("1", "2", "0"), "" for none
    waiting: str = ""
    postedit: bool = False

    @property
    def answer_complete(self) -> bool:
        return self.current != ""

    @property
    def sides(self) -> list[tuple[int, list[str]]]:
        return [(1, self.left), (2, self.right)]


def _sentences(answer_ids: Sequence[int]) -> dict[int, list[str]]:
    """Each report's sentences; a report known by its text only (no sentence split) is shown as that text, the
    text the LLM's prompt gets."""
    texts: dict[int, list[str]] = {answer_id: [] for answer_id in answer_ids}
    for answer_id, text in (
        Sentence.objects.filter(answer_id__in=answer_ids)
        .order_by("answer_id", "index")
        .values_list("answer_id", "text")
    ):
        texts[answer_id].append(text)
    unsplit = [answer_id for answer_id, sentences in texts.items() if not sentences]
    for answer_id, text in Answer.objects.filter(pk__in=unsplit).values_list("pk", "text"):
        if text.strip():
            texts[answer_id] = [text]
    return texts


def pair_page_load(*, work: AssessorWork, number: int | None = None) -> PairPage | None:
    """The page of pair `number` (or of the first pair without a preference); None if there is none."""
    order = pair_order(work)
    given = _given(work, order)
    done = [1 if pair in given else 0 for pair in order]
    position = position_choose(done_counts=done, needed=[1] * len(order), number=number)
    if position is None:
        return None
    pair = order[position.number - 1]
    sentences = _sentences(pair)
    current = given.get(pair)
    return PairPage(
        number=position.number,
        total_answers=len(order),
        answers_done=sum(done),
        next_incomplete=position.next_incomplete,
        frozen=work.status == AssessorWork.Status.SUBMITTED,
        token=pair_token(pair),
        left=sentences[pair[0]],
        right=sentences[pair[1]],
        current="" if current is None else str(current),
    )


def _label_value(label: str) -> int:
    if label not in {str(choice.value) for choice in Preference}:
        raise JudgeError("A preference is 1 (left better), 2 (right better) or 0 (tie).")
    return int(label)


@transaction.atomic
def preference_save(
    *,
    work_id: int,
    user: User,
    number: int,
    label: str,
    previous: str,
    expected_version: int | None,
    token: str | None,
    op_id: str = "",
) -> PreferenceLabel | Replayed:
    value = _label_value(label)
    work = locked_open_work(work_id=work_id, user=user, kinds=[PREFERENCE_WORK], expected_version=expected_version)
    source_id = work.source_id
    if source_id is None:  # every preference work is given with its source; an old row may lack one
        raise JudgeError("This work has no label source: ask an organizer to give it again.")
    first, second = pair_at(order=pair_order(work), number=number, token=token)
    existing = (
        PreferenceLabel.objects.select_for_update()
        .filter(source_id=source_id, first_id=first, second_id=second)
        .first()
    )
    return label_write(
        work=work,
        existing=existing,
        empty=None,
        value=value,
        previous=int(previous) if previous in {"0", "1", "2"} else None,
        conflict=lambda current: "This pair's preference was changed in another tab: reload.",
        create=lambda seconds: PreferenceLabel.objects.create(
            source_id=source_id,
            topic_id=work.topic_id,
            first_id=first,
            second_id=second,
            label=value,
            work=work,
            created_by=user,
            seconds_spent=seconds,
        ),
        item=str(number),
        op_id=op_id,
    )


@transaction.atomic
def preference_submit(*, work_id: int, user: User, expected_version: int | None) -> None:
    work = locked_open_work(work_id=work_id, user=user, kinds=[PREFERENCE_WORK], expected_version=expected_version)
    order = pair_order(work)
    missing = len(order) - len(_given(work, order))
    if missing:
        raise WorkError(f"{missing} pair(s) have no preference yet.")
    work_submit_mark(work=work, user=user)


def preference_progress(works: Sequence[AssessorWork]) -> dict[int, tuple[int, int]]:
    """The registry's `WorkPage.progress`: pairs judged of the topic's pairs, per work."""
    topics = {work.topic_id for work in works}
    totals = Counter(pair.topic_id for pair in planned_pairs(topic_ids=topics))
    done = labels_counted_by_work(PreferenceLabel, works, given=Q(label__isnull=False))
    return {work.pk: (done.get(work.pk, 0), totals.get(work.topic_id, 0)) for work in works}


def organizer_progress() -> list[WorkProgress]:
    return progress_rows(kinds=[PREFERENCE_WORK], progress=preference_progress, models=[PreferenceLabel])


@dataclass
class PairDetail:
    number: int
    left_run: str  # the organizer may see runs
    right_run: str
    label: str
    seconds: float
    time_label: str = ""


def work_detail(work: AssessorWork) -> list[PairDetail]:
    """One work's pairs in the assessor's order, with the runs (for the organizer), preference and time."""
    order = pair_order(work)
    runs = dict(Answer.objects.filter(topic_id=work.topic_id).values_list("pk", "run__run_id"))
    stored = {
        (first, second): (label, seconds or 0.0)  # a person's label has its seconds; none is 0
        for first, second, label, seconds in PreferenceLabel.objects.filter(work=work).values_list(
            "first_id", "second_id", "label", "seconds_spent"
        )
    }
    names = {choice.value: choice.label for choice in Preference}
    rows = []
    for number, pair in enumerate(order, start=1):
        label, seconds = stored.get(pair, (None, 0.0))
        rows.append(
            PairDetail(
                number, runs[pair[0]], runs[pair[1]], names.get(label, "—") if label is not None else "—", seconds
            )
        )
    return rows
