"""PrefNugget's bank job: the reference's calls on the kiddie collection, the bank and each question's origin,
the batches and the stop on a topic worked by hand, re-asks, re-runs, the command and the jobs page."""

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from assessor.jobs.engine import JobRequestInvalid, job_run_sync
from assessor.models import Answer, Job, LabelSource, LLMCall
from nuggets.banks import bank_questions
from nuggets.models import NuggetSet
from preferences.kinds import IMPORT_PREFERENCES
from preferences.models import PreferenceLabel
from prefnugget.jobs import prefnugget_job_create
from prefnugget.kinds import PREFNUGGET_BANK
from prefnugget.models import QuestionOrigin
from tests.builders import make_answer, make_batch, make_run, make_topic, source_of
from tests.llm_server import Reply
from tests.prefnugget.golden import FIXTURES, answers_replaying, extraction, reference_calls, section

pytestmark = pytest.mark.django_db

TOPICS = ["bee", "cloud", "earthworms", "hibernation", "leaf"]
# run1 > run2 > run3 > run4: Borda 3, 1, -1, -3; pairs by Borda(winner) + 0.99 Borda(loser):
# 1>2 3.99, 1>3 2.01, 1>4 0.03, 2>3 0.01, 2>4 -1.97, 3>4 -3.97.
ORDER = [("run1", "run2"), ("run1", "run3"), ("run1", "run4"), ("run2", "run3"), ("run2", "run4"), ("run3", "run4")]


def test_the_kiddie_calls_are_the_references_byte_for_byte(llm_server, ranked):
    system, by_title = reference_calls("prefnugget-best.extract.jsonl")
    titles = {topic: section(calls[0], "query_title") for topic, calls in zip(TOPICS, by_title.values(), strict=True)}
    assert titles["bee"].startswith("bee honey") and titles["leaf"].startswith("fall leaf")
    # One item per topic, worked in topic order: the fake model answers as the reference's model did.
    script = [answers_replaying(by_title[titles[topic]]) for topic in TOPICS]
    llm_server.script(*[Reply.literal(extraction(questions)) for answers in script for questions in answers])
    job = prefnugget_job_create(name="pn", preferences=ranked)
    job_run_sync(job.pk, threads=1)
    job.refresh_from_db()
    assert (job.status, job.done_items, llm_server.count) == (Job.Status.DONE, 5, 30)
    for topic in TOPICS:
        sent = LLMCall.objects.filter(job=job, item__key=f"topic:{topic}").order_by("pk")
        assert [call.messages[0]["content"] for call in sent] == [system] * 6
        assert [call.messages[1]["content"] for call in sent] == by_title[titles[topic]]
    first = LLMCall.objects.filter(job=job).order_by("pk").first()
    assert first.messages[1]["content"] == (FIXTURES / "pn2_extract_iterative.user_example.txt").read_text()
    # The bank: the distinct questions in the order produced, as the last list the reference sent shows them.
    banks = bank_questions("pn")
    for topic in TOPICS:
        last_list = json.loads(section(by_title[titles[topic]][-1], "given_exam_questions"))
        assert [question.text for question in banks[topic]] == last_list


def expected_fake_bank(topic: str) -> list[str]:
    """The fake model's extraction rule (bench/fake_llm.py), written again: per pair in ORDER, the winner's
    sentences the loser lacks as "<first 5 words>?", not given yet; two kept; six pairs, so no stop."""
    texts = dict(Answer.objects.filter(topic_id=topic).values_list("run__run_id", "text"))
    bank: list[str] = []
    for batch in range(0, 6, 2):
        given = list(bank)
        for winner, loser in ORDER[batch : batch + 2]:
            asked = []
            for sentence in re.split(r"(?<=[.!?])\s+", texts[winner]):
                question = " ".join(re.findall(r"[A-Za-z0-9']+", sentence)[:5]) + "?"
                if sentence.strip() not in texts[loser] and question not in given and question not in asked:
                    asked.append(question)
            bank += [question for question in asked[:2] if question not in bank]
    return bank[:20]


def test_the_bank_is_an_llms_question_set_with_each_questions_pair_and_call(llm_server, ranked):
    job = prefnugget_job_create(name="pn-fake", preferences=ranked, topics=["bee", "leaf"])
    assert job.params == {
        "pairs": "preferences",
        "preferences": "ranked",
        "max_pairs": 100,
        "topics": ["bee", "leaf"],
        "queue": "",
    }
    job_run_sync(job.pk)
    assert llm_server.count == 12
    bee = NuggetSet.objects.get(name="pn-fake", topic_id="bee")
    assert (bee.kind, bee.form, bee.status, bee.job_id) == ("auto", "questions", "submitted", job.pk)
    source = LabelSource.objects.get(family="nuggets", name="pn-fake")
    assert (source.kind, source.job_id, source.model) == (LabelSource.Kind.LLM, job.pk, "fake-model")
    banks = bank_questions("pn-fake")
    assert set(banks) == {"bee", "leaf"}
    for topic in ("bee", "leaf"):
        assert [q.text for q in banks[topic]] == expected_fake_bank(topic) and len(banks[topic]) > 4
    # Each question: the call that gave it first, its batch, the pair shown (winner's and loser's reports).
    first = banks["bee"][0]
    origin = QuestionOrigin.objects.filter(nugget_id=first.pk).order_by("batch", "pair").first()
    assert (origin.job_id, origin.batch, origin.pair, origin.position) == (job.pk, 0, 0, 0)
    assert (origin.winner.run.run_id, origin.loser.run.run_id) == ("run1", "run2")
    assert origin.llm_call.job_id == job.pk and origin.llm_call.parsed_ok
    assert first.text in origin.llm_call.raw_response
    assert origin.llm_call.messages[1]["content"].count(origin.winner.text) == 1
    every = QuestionOrigin.objects.filter(job=job)
    assert set(every.values_list("nugget_id", flat=True)) == {q.pk for bank in banks.values() for q in bank}
    assert set(every.values_list("batch", flat=True)) <= {0, 1, 2}


def test_a_rerun_under_another_name_calls_nothing_and_gives_the_same_bank(llm_server, ranked):
    job_run_sync(prefnugget_job_create(name="first", preferences=ranked).pk)
    calls = llm_server.count
    again = prefnugget_job_create(name="second", preferences=ranked)
    job_run_sync(again.pk)
    again.refresh_from_db()
    assert (llm_server.count, again.status) == (calls, Job.Status.DONE)
    first, second = bank_questions("first"), bank_questions("second")
    assert {t: [q.text for q in b] for t, b in first.items()} == {t: [q.text for q in b] for t, b in second.items()}
    # The origins name the re-run's own log rows (cache hits).
    assert set(QuestionOrigin.objects.filter(job=again).values_list("llm_call__from_cache", flat=True)) == {True}


def many_runs(count: int = 8) -> list[Answer]:
    topic = make_topic("t", query="many reports")
    return [make_answer(make_run(f"r{n}"), topic, [(f"Report {n} sentence.", [])]) for n in range(count)]


def test_a_topic_stops_once_it_has_more_than_20_questions_worked_by_hand(llm_server):
    answers = many_runs(8)
    source = source_of("preferences", "all-pairs")
    batch = make_batch(kind=IMPORT_PREFERENCES, file_name="all-pairs.preferences.jsonl")
    # Every pair, the lower run better: r0 Borda 7, r1 5, ... r7 -7; 28 pairs, 14 batches.
    PreferenceLabel.objects.bulk_create(
        PreferenceLabel(source=source, topic_id="t", first=a, second=b, label=1, imported_from=batch)
        for i, a in enumerate(answers)
        for b in answers[i + 1 :]
    )
    # Each call gives three new questions (two are kept): after batch k the topic holds 4k; after the sixth, 24 > 20.
    llm_server.script(
        *[Reply.literal(extraction([f"q{3 * n}", f" q{3 * n + 1} ", f"q{3 * n + 2}"])) for n in range(12)]
    )
    job = prefnugget_job_create(name="stopped", preferences="all-pairs")
    job_run_sync(job.pk)
    assert llm_server.count == 12
    calls = list(LLMCall.objects.filter(job=job).order_by("pk"))
    given = [json.loads(section(call.messages[1]["content"], "given_exam_questions")) for call in calls]
    kept = [[f"q{3 * n}", f"q{3 * n + 1}"] for n in range(12)]
    assert given[0] == given[1] == []
    assert given[2] == given[3] == kept[0] + kept[1]  # both pairs of a batch see the same list
    assert given[10] == given[11] == sum(kept[:10], [])
    # Borda r0 7, r1 5, r2 3, r3 1...: r0>r1 7 + 0.99 * 5 = 11.95, r0>r2 9.97, r0>r3 7.99, r1>r2 5 + 2.97 = 7.97.
    shown = [[section(c.messages[1]["content"], f"{side}_passage") for side in ("winner", "loser")] for c in calls[:4]]
    assert shown == [[f"Report {w} sentence.", f"Report {lo} sentence."] for w, lo in [(0, 1), (0, 2), (0, 3), (1, 2)]]
    bank = [q.text for q in bank_questions("stopped")["t"]]
    assert bank == sum(kept, [])[:20]


def test_an_answer_the_reference_adapter_refuses_is_asked_again(llm_server, ranked):
    llm_server.script(
        Reply.literal("Why do bees sting?"),  # no section
        Reply.literal(extraction(["Why?"]).replace('["Why?"]', "null")),  # None: the reference refuses it
        Reply(),  # the fake model's own answer
        Reply.literal(extraction(["Why?"]).replace('["Why?"]', '```json\n["Why?"]\n```')),  # a fenced block
        Reply.literal(extraction(["Why?"]).replace('["Why?"]', '["Why?",]')),  # JSON with a trailing comma
    )
    job = prefnugget_job_create(name="odd", preferences=ranked, topics=["bee"])
    job_run_sync(job.pk)
    job.refresh_from_db()
    # Six calls, the first two asked twice again each (three asks are the most a call makes).
    assert (job.done_items, job.failed_items, llm_server.count) == (1, 0, 10)
    first = list(LLMCall.objects.filter(job=job).order_by("pk")[:6])
    assert [call.parsed_ok for call in first] == [False, False, True, False, False, True]
    assert "[[ ## reasoning ## ]]" in first[0].error
    assert "[[ ## differentiating_questions ## ]] section says none" in first[1].error
    assert "[[ ## differentiating_questions ## ]] section: '```json" in first[3].error
    assert "[[ ## differentiating_questions ## ]] section: '[\"Why?\",]' is not a JSON array" in first[4].error


def test_an_item_whose_answers_never_read_fails_and_stores_no_bank(llm_server, ranked):
    llm_server.script(*[Reply.literal("No questions today.")] * 10)
    job = prefnugget_job_create(name="broken", preferences=ranked, topics=["bee"])
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.failed_items) == (Job.Status.FAILED, 1)
    assert "differentiating_questions" in job.items.get().error
    assert not NuggetSet.objects.filter(name="broken").exists()


def test_only_topics_with_a_decided_pair_get_an_item(llm_server, kiddie):
    source = source_of("preferences", "ties")
    bee = dict(Answer.objects.filter(topic_id="bee").values_list("run__run_id", "pk"))
    leaf = dict(Answer.objects.filter(topic_id="leaf").values_list("run__run_id", "pk"))
    batch = make_batch(kind=IMPORT_PREFERENCES, file_name="ties.preferences.jsonl")
    PreferenceLabel.objects.create(
        source=source, topic_id="bee", first_id=bee["run1"], second_id=bee["run2"], label=2, imported_from=batch
    )
    PreferenceLabel.objects.create(
        source=source, topic_id="leaf", first_id=leaf["run1"], second_id=leaf["run2"], label=0, imported_from=batch
    )
    job = prefnugget_job_create(name="one", preferences="ties")
    assert list(job.items.values_list("key", "payload")) == [
        ("topic:bee", {"topic": "bee", "pairs": [[bee["run2"], bee["run1"]]]})
    ]
    with pytest.raises(JobRequestInvalid, match="no decided preference"):
        prefnugget_job_create(name="none", preferences="ties", topics=["leaf"])
    with pytest.raises(JobRequestInvalid, match="no preference source named 'nope'"):
        prefnugget_job_create(name="none", preferences="nope")


def test_a_running_jobs_preferences_do_not_count(llm_server, kiddie):
    from preferences.llm import preferences_job_create

    running = preferences_job_create(name="running", topics=["bee"])
    item = running.items.first()
    PreferenceLabel.objects.create(
        source=LabelSource.objects.get(family="preferences", name="running"),
        topic_id="bee",
        first_id=item.payload["first"],
        second_id=item.payload["second"],
        label=1,
        job=running,
    )
    with pytest.raises(JobRequestInvalid, match="no decided preference"):
        prefnugget_job_create(name="early", preferences="running")


def test_run_prefnugget_dry_run_prints_the_pairs_in_order_and_calls_nothing(llm_server, ranked):
    out = StringIO()
    call_command("run_prefnugget", "--preferences", ranked, "--dry-run", "--topics", "leaf", stdout=out)
    scores = ["3.99", "2.01", "0.03", "0.01", "-1.97", "-3.97"]
    assert out.getvalue().splitlines() == [
        f"leaf\t{n // 2}\t{winner}\t{loser}\t{score}"
        for n, ((winner, loser), score) in enumerate(zip(ORDER, scores, strict=True))
    ]
    assert (Job.objects.count(), llm_server.count) == (0, 0)
    with pytest.raises(CommandError, match="no preference source"):
        call_command("run_prefnugget", "--preferences", "nope", "--dry-run", stdout=out)


def test_run_prefnugget_makes_the_job(llm_server, ranked):
    out = StringIO()
    call_command(
        "run_prefnugget",
        "--preferences",
        ranked,
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
    assert job.kind == PREFNUGGET_BANK
    assert job.params == {
        "pairs": "preferences",
        "preferences": "ranked",
        "max_pairs": 100,
        "topics": ["bee"],
        "queue": "",
    }
    assert f"job {job.pk} done: 1/1 items" in out.getvalue()
    assert list(bank_questions("cmd")) == ["bee"]
    with pytest.raises(JobRequestInvalid, match="already produces 'cmd'"):
        prefnugget_job_create(name="cmd", preferences=ranked)


def test_the_jobs_page_launches_it(organizer, llm_server, ranked, worker_inline):
    listing = organizer.get(reverse("jobs:list")).content.decode()
    assert reverse("jobs:launch", args=[PREFNUGGET_BANK]) in listing and "PrefNugget bank" in listing
    launch = organizer.get(reverse("jobs:launch", args=[PREFNUGGET_BANK])).content.decode()
    assert "run_prefnugget" in launch and "Preference source" in launch
    response = organizer.post(
        reverse("jobs:launch", args=[PREFNUGGET_BANK]), {"name": "page", "preferences": ranked, "topics": "bee leaf"}
    )
    job = Job.objects.get(output_name="page")
    assert response.status_code == 302 and worker_inline == [job.pk]
    job.refresh_from_db()
    assert (job.status, job.done_items) == (Job.Status.DONE, 2) and job.created_by is not None
    assert list(bank_questions("page")) == ["bee", "leaf"]
    detail = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    assert "PrefNugget bank" in detail and "prefnugget-extract" in detail
    refused = organizer.post(reverse("jobs:launch", args=[PREFNUGGET_BANK]), {"name": "x", "preferences": "nope"})
    assert refused.status_code == 200 and not Job.objects.filter(output_name="x").exists()
