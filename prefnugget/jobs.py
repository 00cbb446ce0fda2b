"""The two LLM jobs that make question banks: PrefNugget's contrastive extraction and the query-only bank.

Both make one job item per topic and store the topic's bank as an LLM's nugget set of form questions
(kind AutoNuggets, made by the job, under the job's output name), so that it opens for post-editing like an
AutoNuggets draft; each question's origin (the call, the batch, the pair) is kept in `QuestionOrigin`.

PrefNugget's item works its topic's batches in turn (each batch sees the questions of the earlier ones, so a
topic is a chain of calls); topics are independent items, worked at once. The rules are in `contrastive`. Its
pairs come from a preference source, or are drawn at random (the reference's variant `random`): `Pairing`.
"""

from dataclasses import dataclass

from django.contrib.auth.models import User

from assessor.jobs.engine import JobRequestInvalid, job_create, job_prompt, job_source, output_name_check
from assessor.jobs.llm.cache import cache_key
from assessor.jobs.llm.client import LLMConfig, LLMSession, request_options
from assessor.jobs.llm.prompts import as_list_text, prompt_messages
from assessor.jobs.selection import topics_select
from assessor.models import Answer, Job, JobItem, LabelSource, LLMCall, PromptTemplate
from assessor.scoring.lifecycle import labels_counted
from nuggets.banks import Question, bank_store
from nuggets.kinds import LABEL_FAMILY
from nuggets.models import NuggetSet
from preferences.kinds import PREFERENCES_FAMILY
from preferences.models import PreferenceLabel
from prefnugget.contrastive import (
    MAX_PAIRS,
    QuestionList,
    WinnerLoser,
    bank_of,
    batches,
    random_pairs_drawn,
    winner_loser_pairs,
)
from prefnugget.kinds import PREFNUGGET_BANK, QUERY_BANK
from prefnugget.models import QuestionOrigin
from prefnugget.prompts import EXTRACT, QUERY_ONLY
from prefnugget.reading import extracted_read, query_only_read
from reports.texts import request_texts


@dataclass(frozen=True)
class Given:
    """What one call gave: its kept questions, with the batch and the pair (by position) it was asked for."""

    call: int | None  # the LLMCall
    questions: list[str]
    batch: int = 0
    pair: int | None = None


@dataclass(frozen=True)
class PlannedPair:
    pair: WinnerLoser
    winner: int  # answer ids
    loser: int


@dataclass(frozen=True)
class Pairing:
    """Where the job's (winner, loser) pairs come from: a preference source's counted preferences (the
    reference's variant `best`), or random pairs drawn with `seed` (its variant `random`); at most `max_pairs`
    a topic (the reference's max_pairs_considered)."""

    preferences: str = ""
    random_pairs: bool = False
    seed: str = ""
    max_pairs: int = MAX_PAIRS

    def check(self) -> None:
        """Raises JobRequestInvalid for a request that does not say one way of pairing, or says it wrongly."""
        if self.random_pairs and self.preferences:
            raise JobRequestInvalid("random pairs take no preference source: give one or the other")
        if not self.random_pairs and not self.preferences:
            raise JobRequestInvalid("give the preference source whose pairs are used, or ask for random pairs")
        if self.seed and not self.random_pairs:
            raise JobRequestInvalid("a seed draws random pairs: ask for random pairs, or give no seed")
        if self.max_pairs < 1:
            raise JobRequestInvalid(f"the pairs a topic keeps must be at least 1, not {self.max_pairs}")

    def params(self) -> dict:
        """What the job records of its pairing."""
        if self.random_pairs:
            return {"pairs": "random", "seed": self.seed, "max_pairs": self.max_pairs}
        return {"pairs": "preferences", "preferences": self.preferences, "max_pairs": self.max_pairs}


def _preference_plan(pairing: Pairing, topic_ids: list[str]) -> dict[str, list[PlannedPair]]:
    preferences = pairing.preferences
    if not LabelSource.objects.filter(family=PREFERENCES_FAMILY, name=preferences).exists():
        raise JobRequestInvalid(f"no preference source named {preferences!r}")
    labels = labels_counted(
        PreferenceLabel.objects.filter(source__family=PREFERENCES_FAMILY, source__name=preferences)
    ).filter(topic_id__in=topic_ids)
    answer_of: dict[tuple[str, str], int] = {}
    given = []
    for topic_id, first, second, first_id, second_id, label in labels.values_list(
        "topic_id", "first__run__run_id", "second__run__run_id", "first_id", "second_id", "label"
    ):
        answer_of[(topic_id, first)] = first_id
        answer_of[(topic_id, second)] = second_id
        given.append((topic_id, first, second, label))
    plan = {
        topic_id: [
            PlannedPair(pair, answer_of[(topic_id, pair.winner)], answer_of[(topic_id, pair.loser)]) for pair in pairs
        ]
        for topic_id, pairs in winner_loser_pairs(given, keep=pairing.max_pairs).items()
    }
    if not plan:
        raise JobRequestInvalid(
            f"the preference source {preferences!r} has no decided preference on these topics (ties, unreadable "
            "answers and the preferences of open work or of a running job do not count)"
        )
    return plan


def _random_plan(pairing: Pairing, topic_ids: list[str]) -> dict[str, list[PlannedPair]]:
    answer_of: dict[str, dict[str, int]] = {}
    for topic_id, run_id, answer_id in Answer.objects.filter(topic_id__in=topic_ids).values_list(
        "topic_id", "run__run_id", "pk"
    ):
        answer_of.setdefault(topic_id, {})[run_id] = answer_id
    plan: dict[str, list[PlannedPair]] = {}
    for topic_id in sorted(answer_of):
        reports = answer_of[topic_id]
        pairs = random_pairs_drawn(topic_id, reports, seed=pairing.seed, keep=pairing.max_pairs)
        if pairs:
            plan[topic_id] = [PlannedPair(pair, reports[pair.winner], reports[pair.loser]) for pair in pairs]
    if not plan:
        raise JobRequestInvalid("no selected topic has two reports to pair")
    return plan


def prefnugget_plan(
    *, preferences: str = "", topics: list[str] | None = None, pairing: Pairing | None = None
) -> dict[str, list[PlannedPair]]:
    """Per topic (in id order), the (winner, loser) pairs the job works: from the source's counted preferences,
    or drawn at random (`pairing`; the source named by `preferences` when it is None).

    Raises JobRequestInvalid for a request without one way of pairing, an unknown source or topic, and when no
    selected topic has a pair.
    """
    pairing = pairing or Pairing(preferences=preferences)
    pairing.check()
    topic_ids = [topic.id for topic in topics_select(topics)]
    return _random_plan(pairing, topic_ids) if pairing.random_pairs else _preference_plan(pairing, topic_ids)


def prefnugget_job_create(
    *,
    name: str,
    preferences: str = "",
    random_pairs: bool = False,
    seed: str = "",
    max_pairs: int | None = None,
    topics: list[str] | None = None,
    user: User | None = None,
    queue: str | None = None,
    config: LLMConfig | None = None,
    endpoint: str | None = None,
) -> Job:
    output_name_check(
        kind=PREFNUGGET_BANK, name=name, taken=NuggetSet.objects.filter(name=name).exists(), family=LABEL_FAMILY
    )
    pairing = Pairing(preferences, random_pairs, seed, MAX_PAIRS if max_pairs is None else max_pairs)
    plan = prefnugget_plan(topics=topics, pairing=pairing)
    items = [
        (f"topic:{topic_id}", {"topic": topic_id, "pairs": [[pair.winner, pair.loser] for pair in pairs]})
        for topic_id, pairs in plan.items()
    ]
    params = {**pairing.params(), "topics": topics or [], "queue": queue or ""}
    return job_create(
        kind=PREFNUGGET_BANK,
        output_name=name,
        params=params,
        items=items,
        prompts=[EXTRACT.name],
        user=user,
        config=config,
        endpoint=endpoint,
        family=LABEL_FAMILY,
    )


def query_bank_job_create(
    *,
    name: str,
    topics: list[str] | None = None,
    user: User | None = None,
    queue: str | None = None,
    config: LLMConfig | None = None,
    endpoint: str | None = None,
) -> Job:
    output_name_check(
        kind=QUERY_BANK, name=name, taken=NuggetSet.objects.filter(name=name).exists(), family=LABEL_FAMILY
    )
    items = [(f"topic:{topic.id}", {"topic": topic.id}) for topic in topics_select(topics)]
    return job_create(
        kind=QUERY_BANK,
        output_name=name,
        params={"topics": topics or [], "queue": queue or ""},
        items=items,
        prompts=[QUERY_ONLY.name],
        user=user,
        config=config,
        endpoint=endpoint,
        family=LABEL_FAMILY,
    )


def _call_id(*, llm: LLMSession, item: JobItem, prompt: PromptTemplate, messages: list[dict[str, str]]) -> int | None:
    """The logged call (or cache hit) whose answer `llm.ask` just returned for these messages."""
    llm.writes_flush()  # the session may hold its log back for its next statement (`LLMSession.defer_writes`)
    temperature = request_options(llm.config, prompt)["temperature"]
    key = cache_key(model=llm.config.model, prompt=prompt, temperature=temperature, messages=messages)
    return (
        LLMCall.objects.filter(item_id=item.pk, cache_key=key, parsed_ok=True)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )


def prefnugget_item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> list[Given]:
    """The topic's batches in turn until it holds more than 20 distinct questions: what each call gave."""
    topic_id = item.payload["topic"]
    pairs: list[list[int]] = item.payload["pairs"]
    request = request_texts([topic_id])[topic_id]
    texts = dict(Answer.objects.filter(pk__in={pk for pair in pairs for pk in pair}).values_list("pk", "text"))
    prompt = job_prompt(job, EXTRACT.name)
    so_far = QuestionList()
    produced: list[Given] = []
    for number, batch in enumerate(batches(pairs)):
        if so_far.done():
            break
        given = as_list_text(so_far.so_far())  # the same list for both pairs of the batch
        answers = []
        for position in batch:
            winner, loser = pairs[position]
            messages = prompt_messages(
                prompt,
                query_title=request.title,
                query_background=request.background,
                winner_passage=texts[winner],
                loser_passage=texts[loser],
                given_exam_questions=given,
            )
            reading = llm.ask(prompt, messages, extracted_read)
            call = _call_id(llm=llm, item=item, prompt=prompt, messages=messages)
            answers.append(Given(call, reading.questions, batch=number, pair=position))
        for answer in answers:
            so_far.add(answer.questions)
        produced += answers
    return produced


def _origins_store(*, job: Job, nugget_set: NuggetSet, answers: list[Given], pairs: list[list[int]] | None) -> None:
    nugget_of = dict(nugget_set.nuggets.values_list("text", "pk"))
    QuestionOrigin.objects.bulk_create(
        QuestionOrigin(
            nugget_id=nugget_of[question],
            job=job,
            llm_call_id=answer.call,
            batch=answer.batch,
            pair=answer.pair,
            winner_id=pairs[answer.pair][0] if pairs is not None and answer.pair is not None else None,
            loser_id=pairs[answer.pair][1] if pairs is not None and answer.pair is not None else None,
            position=position,
        )
        for answer in answers
        for position, question in enumerate(answer.questions)
        if question in nugget_of
    )


def _bank_store(*, job: Job, item: JobItem, answers: list[Given], pairs: list[list[int]] | None) -> None:
    bank = bank_of(question for answer in answers for question in answer.questions)
    nugget_set = bank_store(
        topic_id=item.payload["topic"],
        name=job.output_name,
        questions=[Question(text=text) for text in bank],
        source=job_source(job, LABEL_FAMILY),
        job=job,
    )
    _origins_store(job=job, nugget_set=nugget_set, answers=answers, pairs=pairs)


def prefnugget_item_store(*, job: Job, item: JobItem, result: list[Given]) -> None:
    _bank_store(job=job, item=item, answers=result, pairs=item.payload["pairs"])


def query_bank_item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> list[Given]:
    topic_id = item.payload["topic"]
    request = request_texts([topic_id])[topic_id]
    prompt = job_prompt(job, QUERY_ONLY.name)
    messages = prompt_messages(
        prompt,
        query_title=request.title,
        query_background=request.background,
        query_problem=request.problem_statement,
    )
    reading = llm.ask(prompt, messages, query_only_read)
    return [Given(_call_id(llm=llm, item=item, prompt=prompt, messages=messages), reading.questions)]


def query_bank_item_store(*, job: Job, item: JobItem, result: list[Given]) -> None:
    _bank_store(job=job, item=item, answers=result, pairs=None)
