"""PrefNugget's variant with random pairs instead of a preference source's (the reference's variant `random`):
the pairs drawn, the reference's calls on the kiddie collection, the seed and the count recorded, the command
and the jobs page."""

from io import StringIO
from itertools import combinations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from assessor.jobs.engine import JobRequestInvalid, job_run_sync
from assessor.models import Answer, Job, LLMCall
from nuggets.banks import bank_questions
from preferences.sampling import report_pairs
from prefnugget.contrastive import random_pairs_drawn
from prefnugget.jobs import prefnugget_job_create
from prefnugget.kinds import PREFNUGGET_BANK
from tests.llm_server import Reply
from tests.prefnugget.golden import answers_replaying, extraction, reference_calls, section

TOPICS = ["bee", "cloud", "earthworms", "hibernation", "leaf"]
RUNS = [f"r{n:02d}" for n in range(10)]


def unordered(pairs) -> list[frozenset[str]]:
    return [frozenset((pair.winner, pair.loser)) for pair in pairs]


def test_the_pairs_drawn_are_distinct_pairs_of_two_reports_as_many_as_asked():
    pairs = random_pairs_drawn("t", RUNS, seed="7", keep=25)
    assert len(pairs) == 25
    assert all(pair.winner != pair.loser and pair.topic_id == "t" for pair in pairs)
    assert len(set(unordered(pairs))) == 25 and set().union(*unordered(pairs)) <= set(RUNS)
    # Every pair i < j of the shuffled order: the first report is the winner of the first 9 pairs, against the 9
    # others; the second report of the next 8.
    first, second = pairs[0].winner, pairs[9].winner
    assert [pair.winner for pair in pairs[:17]] == [first] * 9 + [second] * 8
    assert {pair.loser for pair in pairs[:9]} == set(RUNS) - {first}
    assert pairs[0].loser == second


def test_fewer_pairs_than_asked_are_all_the_pairs_once():
    pairs = random_pairs_drawn("t", RUNS, keep=100)
    assert len(pairs) == 10 * 9 // 2
    assert sorted(map(sorted, unordered(pairs))) == sorted(map(sorted, combinations(RUNS, 2)))
    assert random_pairs_drawn("t", ["only"]) == []


def test_the_same_seed_draws_the_same_pairs_and_another_seed_others():
    drawn = random_pairs_drawn("t", RUNS, seed="7")
    assert drawn == random_pairs_drawn("t", list(reversed(RUNS)), seed="7")  # the order given does not matter
    assert drawn != random_pairs_drawn("t", RUNS, seed="8")
    assert drawn != random_pairs_drawn("t", RUNS)  # the reference's own seed: the topic id
    assert drawn != random_pairs_drawn("u", RUNS, seed="7")  # each topic its own draw


def test_the_pairs_drawn_are_not_the_stride_samplings():
    stride = report_pairs(RUNS)  # n = 10: 25 pairs
    drawn = random_pairs_drawn("t", RUNS, seed="7", keep=len(stride))
    assert len(drawn) == len(stride) == 25
    assert set(unordered(drawn)) != {frozenset(pair) for pair in stride}


@pytest.mark.django_db
def test_the_kiddie_calls_are_the_references_random_variants_byte_for_byte(llm_server, kiddie):
    """The reference's golden trace of its variant `random` (no preferences; each topic's reports shuffled by a
    generator seeded with the topic id): the same calls, in the same order, with the same messages."""
    system, by_title = reference_calls("prefnugget-random.extract.jsonl")
    titles = {topic: section(calls[0], "query_title") for topic, calls in zip(TOPICS, by_title.values(), strict=True)}
    assert titles["bee"].startswith("bee honey") and titles["leaf"].startswith("fall leaf")
    script = [answers_replaying(by_title[titles[topic]]) for topic in TOPICS]
    llm_server.script(*[Reply.literal(extraction(questions)) for answers in script for questions in answers])
    job = prefnugget_job_create(name="pn-random", random_pairs=True)
    assert job.params == {"pairs": "random", "seed": "", "max_pairs": 100, "topics": [], "queue": ""}
    job_run_sync(job.pk, threads=1)
    job.refresh_from_db()
    assert (job.status, job.done_items, llm_server.count) == (Job.Status.DONE, 5, 30)
    compared = 0
    for topic in TOPICS:
        sent = LLMCall.objects.filter(job=job, item__key=f"topic:{topic}").order_by("pk")
        assert [call.messages[0]["content"] for call in sent] == [system] * 6
        assert [call.messages[1]["content"] for call in sent] == by_title[titles[topic]]
        compared += 1
    assert compared == 5
    # In the trace, bee's first pair shows run2 as the winner over run1 (its shuffle: run2, run1, run3, run4).
    bee = dict(Answer.objects.filter(topic_id="bee").values_list("run__run_id", "pk"))
    assert job.items.get(key="topic:bee").payload["pairs"][0] == [bee["run2"], bee["run1"]]


@pytest.mark.django_db
def test_a_seed_and_a_count_are_recorded_and_draw_the_same_pairs_again(llm_server, kiddie):
    job = prefnugget_job_create(name="seven", random_pairs=True, seed="7", max_pairs=4, topics=["bee", "leaf"])
    assert job.params == {"pairs": "random", "seed": "7", "max_pairs": 4, "topics": ["bee", "leaf"], "queue": ""}
    payloads = dict(job.items.values_list("key", "payload"))
    assert list(payloads) == ["topic:bee", "topic:leaf"]
    for topic in ("bee", "leaf"):
        pairs = payloads[f"topic:{topic}"]["pairs"]
        answers = set(Answer.objects.filter(topic_id=topic).values_list("pk", flat=True))
        assert len(pairs) == 4 and len({frozenset(pair) for pair in pairs}) == 4
        assert all(winner != loser and {winner, loser} <= answers for winner, loser in pairs)
    again = prefnugget_job_create(name="seven-again", random_pairs=True, seed="7", max_pairs=4, topics=["bee", "leaf"])
    assert dict(again.items.values_list("key", "payload")) == payloads
    other = prefnugget_job_create(name="eight", random_pairs=True, seed="8", max_pairs=4, topics=["bee", "leaf"])
    assert dict(other.items.values_list("key", "payload")) != payloads
    job_run_sync(job.pk)
    assert llm_server.count == 8 and set(bank_questions("seven")) == {"bee", "leaf"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({"preferences": "ranked", "random_pairs": True}, "random pairs take no preference source"),
        ({}, "give the preference source"),
        ({"preferences": "ranked", "seed": "7"}, "a seed draws random pairs"),
        ({"random_pairs": True, "max_pairs": 0}, "at least 1, not 0"),
    ],
)
def test_a_request_without_one_way_of_pairing_is_refused(kiddie, options, refused):
    with pytest.raises(JobRequestInvalid, match=refused):
        prefnugget_job_create(name="refused", **options)
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_run_prefnugget_draws_random_pairs(llm_server, kiddie):
    out = StringIO()
    call_command("run_prefnugget", "--random-pairs", "--max-pairs", "3", "--dry-run", "--topics", "bee", stdout=out)
    # The reference's shuffle of bee (its golden trace): run2, run1, run3, run4; the first 3 pairs i < j.
    assert out.getvalue().splitlines() == ["bee\t0\trun2\trun1\t0", "bee\t0\trun2\trun3\t0", "bee\t1\trun2\trun4\t0"]
    call_command(
        "run_prefnugget",
        "--random-pairs",
        "--seed",
        "7",
        "--name",
        "cmd",
        "--topics",
        "bee",
        "--sync",
        "--threads",
        "1",
        stdout=out,
    )
    job = Job.objects.get(output_name="cmd")
    assert job.params == {"pairs": "random", "seed": "7", "max_pairs": 100, "topics": ["bee"], "queue": ""}
    assert (job.status, llm_server.count) == (Job.Status.DONE, 6)
    with pytest.raises(CommandError, match="give the preference source"):
        call_command("run_prefnugget", "--name", "none", "--dry-run", stdout=out)
    with pytest.raises(CommandError, match="a seed draws random pairs"):
        call_command("run_prefnugget", "--preferences", "x", "--seed", "7", "--name", "x", stdout=out)


@pytest.mark.django_db
def test_the_jobs_page_launches_random_pairs(organizer, llm_server, kiddie, worker_inline):
    launch = organizer.get(reverse("jobs:launch", args=[PREFNUGGET_BANK])).content.decode()
    assert "Random pairs" in launch and "seed" in launch
    url = reverse("jobs:launch", args=[PREFNUGGET_BANK])
    response = organizer.post(
        url, {"name": "page", "random_pairs": "on", "seed": "7", "max_pairs": "2", "topics": "bee"}
    )
    job = Job.objects.get(output_name="page")
    assert response.status_code == 302 and worker_inline == [job.pk]
    assert job.params == {"pairs": "random", "seed": "7", "max_pairs": 2, "topics": ["bee"], "queue": ""}
    job.refresh_from_db()
    assert (job.status, llm_server.count) == (Job.Status.DONE, 2)
    refused = organizer.post(url, {"name": "x", "topics": "bee"}).content.decode()
    assert "give the preference source" in refused and not Job.objects.filter(output_name="x").exists()
