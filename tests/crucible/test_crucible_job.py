"""Crucible on the kiddie collection against the fake LLM server: the reports it writes (recomputed here from
the server's rule and an independent BM25 ranking), the command, the jobs page, a re-run, an endpoint
without log-probabilities, and the run stored, judged and exported as an imported one."""

import json
import re
from io import StringIO

import bm25s
import pytest
import Stemmer
from bm25s.stopwords import STOPWORDS_EN
from django.core.management import call_command
from django.urls import reverse

from assessor.jobs.engine import JobRequestInvalid, job_reopen, job_run_sync
from assessor.models import Answer, Job, LLMCall, Run, Segment
from crucible.llm import NO_LOGPROBS, crucible_job_create
from crucible.models import Chunk, CrucibleRun, Extraction
from nuggets.banks import bank_questions
from prefnugget.jobs import query_bank_job_create
from reports.importing import reports_import
from reports.models import ReportRequest
from tests.builders import make_run
from tests.crucible.bank import BANK
from tests.llm_server import FakeLLMServer, Reply, llm_settings

pytestmark = pytest.mark.django_db

LONG_WORD = re.compile(r"[A-Za-z0-9']+")


def long_words(text: str) -> set[str]:
    return {word.lower() for word in LONG_WORD.findall(text) if len(word) >= 4}


def ranking(topic_id: str, documents: int) -> list[str]:
    """The topic's documents by BM25, from bm25s directly: problem statement, title and background as the query."""
    segments = list(Segment.objects.exclude(text="").order_by("docid"))
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([f"{s.title} {s.text}" for s in segments], stopwords="en", stemmer=stemmer))
    request = ReportRequest.objects.get(pk=topic_id)
    query = f"{request.problem_statement} {request.title} {request.background}"
    found, scores = retriever.retrieve(bm25s.tokenize([query], stopwords="en", stemmer=stemmer), k=documents)
    return [segments[int(i)].docid for i, score in zip(found[0], scores[0], strict=True) if score > 0]


def stems(text: str) -> tuple[str, ...]:
    words = [w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS_EN]
    return tuple(Stemmer.Stemmer("english").stemWords(words))


def expected_report(
    topic_id: str, *, documents: int = 20, k: int = 1, extractive: bool = False, questions: list[str] | None = None
) -> list[tuple[str, str]]:
    """(sentence, cited document) as the fake model's rule and Crucible's ranking make them (kiddie documents are
    each shorter than a chunk)."""
    texts = dict(Segment.objects.values_list("docid", "text"))
    per_question = []
    for question in BANK[topic_id] if questions is None else questions:
        asked = long_words(question)
        found = []
        for rank, docid in enumerate(ranking(topic_id, documents)):
            matching = [s for s in re.split(r"(?<=[.!?])\s+", texts[docid]) if asked & long_words(s)]
            if matching:
                extracted = " ".join(matching)
                probability = (len(asked & long_words(extracted)) + 1) / (len(asked) + 2)
                found.append((-probability, rank, extracted if extractive else matching[0], docid))
        per_question.append(sorted(found)[:k])
    kept, seen = [], set()
    for round_ in range(k):
        for top in per_question:
            if round_ < len(top) and stems(top[round_][2]) not in seen:
                seen.add(stems(top[round_][2]))
                kept.append((top[round_][2], top[round_][3]))
    return kept


def stored_report(run_id: str, topic_id: str) -> list[tuple[str, str]]:
    answer = Answer.objects.get(run__run_id=run_id, topic_id=topic_id)
    return [(s.text, s.citations.get().segment_id) for s in answer.sentences.order_by("index")]


def test_the_job_writes_each_topics_report_from_the_bank(llm_server, bank):
    job = crucible_job_create(name="crucible-people", bank=bank)
    texts = dict(Segment.objects.values_list("docid", "text"))
    for topic_id in BANK:
        chunks = list(Chunk.objects.filter(job=job, topic_id=topic_id).values_list("segment_id", "text"))
        # Every kiddie document is shorter than a chunk: one chunk each, in BM25's order.
        assert chunks == [(docid, texts[docid]) for docid in ranking(topic_id, 20)]
    calls = sum(len(BANK[t]) * Chunk.objects.filter(job=job, topic_id=t).count() for t in BANK)
    assert job.total_items == 4
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, job.calls, llm_server.count) == (Job.Status.DONE, 4, calls, calls)
    assert all(request["logprobs"] is True for request in llm_server.requests)
    for topic_id in BANK:
        expected = expected_report(topic_id)
        assert expected and stored_report("crucible-people", topic_id) == expected
    crucible = CrucibleRun.objects.get(job=job)
    run = Run.objects.get(run_id="crucible-people")
    assert (crucible.run, crucible.bank, crucible.variant, crucible.per_question, crucible.error) == (
        run,
        bank,
        "abstractive",
        1,
        "",
    )
    assert crucible.made_from is not None and crucible.made_from.kind == "reports"
    # No answer is no candidate: a question the document does not answer is kept as "no answer".
    assert Extraction.objects.filter(job=job, no_answer=True).exists()


def test_the_extractive_and_long_variant_keeps_five_supporting_texts_per_question(llm_server, bank):
    job_run_sync(crucible_job_create(name="crucible-long", bank=bank, variant="extractive", length="long").pk)
    assert sorted(BANK) == ["bee", "leaf"]
    for topic_id in BANK:
        expected = expected_report(topic_id, k=5, extractive=True)
        assert len(expected) > 2 and stored_report("crucible-long", topic_id) == expected


def test_a_report_is_cut_to_its_requests_limit_at_a_sentence_boundary(llm_server, bank):
    ReportRequest.objects.filter(pk="leaf").update(limit=200)
    job_run_sync(crucible_job_create(name="cut", bank=bank, length="long").pk)
    whole = expected_report("leaf", k=5)
    kept = []
    while len(kept) < len(whole) and len(" ".join(text for text, _ in whole[: len(kept) + 1])) <= 200:
        kept = whole[: len(kept) + 1]
    assert 0 < len(kept) < len(whole) and stored_report("cut", "leaf") == kept
    assert stored_report("cut", "bee") == expected_report("bee", k=5)  # no limit


def test_a_query_only_bank_made_by_its_job_gives_a_run_that_says_so(llm_server, kiddie, organizer):
    bank_job = query_bank_job_create(name="query-only", topics=["bee", "leaf"])
    job_run_sync(bank_job.pk)
    job_run_sync(crucible_job_create(name="cru-qo", bank="query-only").pk)
    questions = bank_questions("query-only")
    assert list(questions) == ["bee", "leaf"]
    for topic_id, bank in questions.items():
        expected = expected_report(topic_id, questions=[question.text for question in bank])
        assert expected and stored_report("cru-qo", topic_id) == expected
    page = organizer.get(reverse("collection:run", args=["cru-qo"])).content.decode()
    assert f"job {bank_job.pk} (Query-only bank)" in page


def test_a_rerun_under_another_name_makes_no_call_and_the_same_run(llm_server, bank):
    job_run_sync(crucible_job_create(name="first", bank=bank).pk)
    calls = llm_server.count
    again = crucible_job_create(name="second", bank=bank)
    job_run_sync(again.pk)
    again.refresh_from_db()
    assert (llm_server.count, again.calls, again.status) == (calls, 0, Job.Status.DONE)
    assert LLMCall.objects.filter(job=again, from_cache=True).count() == calls
    for topic_id in BANK:
        assert stored_report("second", topic_id) == stored_report("first", topic_id)


def test_an_item_that_failed_midway_asks_only_its_unanswered_pairs_again(llm_server, bank):
    job = crucible_job_create(name="flaky", bank=bank, topics=["bee"])
    chunks = Chunk.objects.filter(job=job).count()
    # The first question's first two pairs are answered; the third meets four 500s (three retries): the item fails.
    llm_server.script(Reply(), Reply(), *[Reply.error(500)] * 4)
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, job.failed_items) == (Job.Status.FAILED, 1, 1)
    assert llm_server.count == 2 + 4 + chunks
    job_reopen(job.pk)
    job_run_sync(job.pk)
    job.refresh_from_db()
    # The two answers and their confidences are kept: only the other pairs are asked.
    assert (job.status, llm_server.count) == (Job.Status.DONE, 2 + 4 + chunks + chunks - 2)
    assert stored_report("flaky", "bee") == expected_report("bee")


def test_an_endpoint_without_log_probabilities_is_refused_with_its_reason(settings, bank):
    server = FakeLLMServer(logprobs=False).start()
    try:
        llm_settings(settings, server)
        job = crucible_job_create(name="no-logprobs", bank=bank)
        job_run_sync(job.pk)
    finally:
        server.stop()
    job.refresh_from_db()
    assert (job.status, job.failed_items, job.done_items) == (Job.Status.FAILED, 4, 0)
    # The first answer tells it; the other items fail for the same reason without a call.
    assert server.count == 1
    assert set(job.items.values_list("error", flat=True)) == {NO_LOGPROBS}
    assert (
        CrucibleRun.objects.get(job=job).error == NO_LOGPROBS and not Run.objects.filter(run_id="no-logprobs").exists()
    )


def test_names_and_banks_are_checked_before_anything_is_made(llm_server, bank):
    with pytest.raises(JobRequestInvalid, match="no counted question bank named 'nope'"):
        crucible_job_create(name="x", bank="nope")
    with pytest.raises(JobRequestInvalid, match="A run named 'run1' is stored already"):
        crucible_job_create(name="run1", bank=bank)
    with pytest.raises(JobRequestInvalid, match="unknown topic"):
        crucible_job_create(name="x", bank=bank, topics=["nope"])
    assert (Job.objects.count(), llm_server.count) == (0, 0)


def test_the_command_runs_the_job_and_names_the_run(llm_server, bank):
    out = StringIO()
    call_command(
        "run_crucible", "--name", "cli", "--bank", bank, "--topics", "bee", "--sync", "--threads", "1", stdout=out
    )
    assert "run cli: 1 reports" in out.getvalue()
    assert stored_report("cli", "bee") == expected_report("bee")


def test_the_dry_run_prints_the_chunks_and_calls_nothing(llm_server, bank):
    out = StringIO()
    call_command("run_crucible", "--bank", bank, "--topics", "bee", "--documents", "3", "--dry-run", stdout=out)
    texts = dict(Segment.objects.values_list("docid", "text"))
    ranked = ranking("bee", 3)
    assert out.getvalue().splitlines() == [
        *(f"bee\t{rank}\t{docid}\t{len(texts[docid])}" for rank, docid in enumerate(ranked)),
        f"{2 * len(ranked)} calls: 1 topics, their questions x their chunks",
    ]
    assert (Job.objects.count(), llm_server.count) == (0, 0)


def test_the_jobs_page_launches_it(organizer, llm_server, bank, worker_inline):
    launch = organizer.get(reverse("jobs:launch", args=["crucible"])).content.decode()
    assert "manage.py run_crucible --name NAME" in launch and "people-bank" in launch
    response = organizer.post(
        reverse("jobs:launch", args=["crucible"]),
        {"name": "page", "bank": bank, "variant": "abstractive", "length": "short", "documents": 20, "chunks": 40},
    )
    job = Job.objects.get(output_name="page")
    assert response.status_code == 302 and worker_inline == [job.pk]
    assert stored_report("page", "leaf") == expected_report("leaf")
    assert "Crucible run from a bank" in organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    listing = organizer.get(reverse("jobs:list")).content.decode()
    assert reverse("jobs:launch", args=["crucible"]) in listing


def test_the_run_is_exported_and_judged_as_an_imported_one(llm_server, bank, organizer, tmp_path):
    job_run_sync(crucible_job_create(name="cru", bank=bank).pk)
    out = tmp_path / "cru.jsonl"
    call_command("export_reports", "--run", "cru", "--output", str(out))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["metadata"]["topic_id"] for line in lines] == ["bee", "leaf"]
    for line in lines:
        assert line["metadata"]["bank"] == bank and line["metadata"]["prompt"] == "crucible-extract v1"
        assert [(r["text"], r["citations"]) for r in line["responses"]] == [
            (text, [docid]) for text, docid in stored_report("cru", line["metadata"]["topic_id"])
        ]
        assert set(line["documents"]) == {docid for r in line["responses"] for docid in r["citations"]}
    # The file back in: the same run, nothing changed.
    again = reports_import(path=out)
    assert (again.created, again.replaced, again.unchanged) == (0, 0, 2)
    # A preference job compares it with the other runs like any other report.
    call_command("run_preferences", "--name", "prefs", "--topics", "bee", "--sync", "--threads", "1", stdout=StringIO())
    board = organizer.get(reverse("collection:borda_leaderboard") + "?source=prefs").content.decode()
    assert "/collection/runs/cru" in board
    # The first family's support judge checks its citations like any run's.
    call_command(
        "run_auto_support", "--name", "llm-support", "--runs", "cru", "--sync", "--threads", "1", stdout=StringIO()
    )
    board = organizer.get(reverse("collection:support_leaderboard") + "?method=llm-support").content.decode()
    assert "/collection/runs/cru" in board
    # Its page says what made it; an imported run's page says nothing of Crucible.
    page = organizer.get(reverse("collection:run", args=["cru"])).content.decode()
    assert "Made by Crucible" in page and "people-bank" in page and "crucible-extract v1" in page
    assert "fake-model" in page and "abstractive (the condensed sentence), 1 sentence per question" in page
    assert "people-bank</span>, made by imported files" in page
    assert "Made by Crucible" not in organizer.get(reverse("collection:run", args=["run1"])).content.decode()


def test_a_pair_whose_answer_cannot_be_read_is_no_candidate_and_the_rest_still_are(llm_server, bank):
    job = crucible_job_create(name="odd", bank=bank, topics=["bee"])
    # The first pair's three asks (two re-asks) are answered without the sections asked for.
    llm_server.script(*[Reply.literal("Bees make honey, I think.")] * 3)
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, job.failed_items) == (Job.Status.DONE, 2, 0)
    failed = Extraction.objects.get(job=job, error__startswith="no usable answer after 3 asks")
    assert "Bees make honey, I think." in failed.error and failed.confidence is None
    assert stored_report("odd", "bee")  # made from the other pairs


def test_a_run_of_the_same_id_stored_while_the_job_ran_is_left_alone(llm_server, bank):
    job = crucible_job_create(name="taken", bank=bank, topics=["bee"])
    make_run("taken")
    job_run_sync(job.pk)
    crucible = CrucibleRun.objects.get(job=job)
    assert crucible.run is None and "was stored while the job ran" in crucible.error
    assert not Answer.objects.filter(run__run_id="taken").exists()
