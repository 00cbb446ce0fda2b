"""ARGUE's whole flow on the hand-made collection of tests/argue/flow.py, by an LLM (the fake server's rules,
argue/fake_answers.py, worked again by hand here) and by people on the sentence pages: uncited sentences asked
whether they need a citation and are first instances, the bank as scored, the no-reference and the unscored
topic, the run's macro and micro figures, negative assertions and malformed answers."""

import pytest
from django.urls import reverse

from argue.judging import argue_progress, argue_work_give, topic_plan
from argue.llm import argue_job_create, bare_yes_no_read
from argue.models import AnswerAttestation, JudgedReport, UncitedAttestation
from argue.scoring import argue_scores_from_labels, notes
from assessor.jobs.engine import job_run_sync
from assessor.jobs.llm.parsing import AnswerUnusable
from assessor.models import Topic
from assessor.work.roles import Role
from nuggets.models import GoldAnswer
from tests.argue.flow import F1_TEXTS, PEOPLE, flow_collection_make
from tests.argue.pages import SCRIPT, client_for, judge_all, page_of, rows_of
from tests.builders import make_user
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def flow(db):
    return flow_collection_make()


def uncited(name: str) -> dict[tuple[str, str, int, str], str]:
    rows = UncitedAttestation.objects.filter(source__name=name).values_list(
        "sentence__answer__run__run_id", "sentence__answer__topic_id", "sentence__index", "asked", "label"
    )
    return {(run, topic, index, asked): label for run, topic, index, asked, label in rows}


def answers(name: str) -> dict[tuple[str, str, int, str], str]:
    """(run, topic, sentence index, gold answer's text) -> the source's label."""
    texts = dict(((g.nugget_id, g.position), g.text) for g in GoldAnswer.objects.all())
    rows = AnswerAttestation.objects.filter(source__name=name).values_list(
        "sentence__answer__run__run_id",
        "sentence__answer__topic_id",
        "sentence__index",
        "question_id",
        "answer_index",
        "label",
    )
    return {(run, topic, index, texts[(q, i)]): label for run, topic, index, q, i, label in rows}


def test_an_llm_asks_argues_questions_sentence_by_sentence(llm_server, flow):
    job = argue_job_create(name="llm", bank="gold", topics=["f1", "f2", "f3"])
    job_run_sync(job.pk)
    # A/f1: s0 support + Ann; s1 needs + first; s2 needs; s3 needs + first; s4 support + Ann (asked though d1
    # does not support it): 9. A/f2: support + purr + meow (ungated) = 3. A/f3: support, no answer left = 1.
    # B/f1: support + Ann, the very questions of A's s0, answered from the cache. Zed (no document) is never asked.
    assert llm_server.count == 9 + 3 + 1
    # Needs a citation: a capitalized word after the first (Paris, Team); first instance unless every word was
    # said before ("met" was not; s3's words all were).
    assert uncited("llm") == {
        ("A", "f1", 1, "needs_citation"): "yes",
        ("A", "f1", 1, "first_instance"): "yes",
        ("A", "f1", 2, "needs_citation"): "no",
        ("A", "f1", 3, "needs_citation"): "yes",
        ("A", "f1", 3, "first_instance"): "no",
    }
    assert answers("llm") == {
        ("A", "f1", 0, "Ann"): "yes",
        ("A", "f1", 4, "Ann"): "no",
        ("B", "f1", 0, "Ann"): "yes",
        ("A", "f2", 0, "purr"): "yes",
        ("A", "f2", 0, "meow"): "no",
    }
    bare = [r for r in llm_server.requests if r["messages"][0]["content"].startswith("You are ArgueNeedsCitation")]
    assert len(bare) == 3 and {r["max_tokens"] for r in bare} == {10}
    assert job.__class__.objects.get(pk=job.pk).prompt_versions == {
        "argue-citation-support-v1": 1,
        "argue-answer-agreement-v1": 1,
        "argue-needs-citation-v1": 1,
        "argue-first-instance-v1": 1,
    }


def test_the_scores_of_the_flow_worked_by_hand(llm_server, flow, organizer):
    job_run_sync(argue_job_create(name="llm", bank="gold", topics=["f1", "f2", "f3"]).pk)
    scores = argue_scores_from_labels(name="llm")
    assert scores.topics == ["f1", "f2"]  # f3's bank has no gold answer: not scored
    a = scores.per_topic[("A", "f1")]
    # Kept questions: q0 alone (Why? has no answer). Covered by s0 (supported, states Ann): 1/1.
    assert (a["nugget_coverage"], a["weighted_coverage"], a["questions"], a["covered"]) == (1, 1, 1, 1)
    # Citing s0 (supported) and s4 (d1 does not support it), and s1, an uncited first instance needing a
    # citation: 1 / (2 + 1). s2 needs none, s3 is a repeat: ignored.
    assert a["sentence_support"] == pytest.approx(1 / 3)
    assert (a["citation_support"], a["citation_relevance"]) == pytest.approx((1 / 2, 1))
    # F1 = 2 (1/3)(1) / (1/3 + 1) = 1/2
    assert (a["f1"], a["weighted_f1"]) == pytest.approx((1 / 2, 1 / 2))
    assert (a["sentences"], a["citations"], a["rewarded"], a["penalized"]) == (5, 2, 1, 2)
    assert a["characters"] == len(" ".join(F1_TEXTS))
    # f2, ungated: purr stated, d4 supports; no document of a no-reference bank is relevant.
    a2 = scores.per_topic[("A", "f2")]
    assert (a2["f1"], a2["nugget_coverage"], a2["sentence_support"], a2["citation_relevance"]) == (1, 1, 1, 0)
    assert ("A", "f3") not in scores.per_topic
    means = scores.run_means
    # A: F1 (1/2 + 1) / 2; micro: covered (1 + 1)/(1 + 1), support (1 + 1)/(3 + 1), F1 2 (1/2)(1) / (3/2) = 2/3,
    # citations supporting (1 + 1)/(2 + 1), relevant (2 + 0)/(2 + 1)
    assert (means["A"]["f1"], means["A"]["sentence_support"]) == pytest.approx((3 / 4, (1 / 3 + 1) / 2))
    assert (means["A"]["nugget_coverage_micro"], means["A"]["sentence_support_micro"]) == pytest.approx((1, 1 / 2))
    assert means["A"]["f1_micro"] == pytest.approx(2 / 3)
    assert (means["A"]["citation_support_micro"], means["A"]["citation_relevance_micro"]) == pytest.approx(
        (2 / 3, 2 / 3)
    )
    # B: f1 F1 1, f2 missing: 0 -> 1/2; micro coverage 1/(1 + 1), support 1/1, F1 2 (1/2) / (3/2) = 2/3
    assert (means["B"]["f1"], means["B"]["nugget_coverage_micro"], means["B"]["f1_micro"]) == pytest.approx(
        (1 / 2, 1 / 2, 2 / 3)
    )
    skipped = argue_scores_from_labels(name="llm", skip_missing=True).run_means["B"]
    assert (skipped["f1"], skipped["nugget_coverage_micro"]) == (1, 1)
    (unscored, ungated) = notes([("llm",)])[("llm",)]
    assert unscored.startswith("1 topic(s) (f3) not scored") and ungated.startswith("1 topic(s) (f2) scored ungated")
    page = organizer.get(reverse("collection:argue_leaderboard"), {"source": "llm"}).content.decode()
    assert "1 topic(s) (f3) not scored" in page and "1 topic(s) (f2) scored ungated" in page


def test_an_answer_neither_yes_nor_no_is_asked_again_then_counts_as_no_and_malformed(llm_server, flow):
    assert [bare_yes_no_read(text) for text in ("YES", "no.", " Yes, it needs one")] == [True, False, True]
    with pytest.raises(AnswerUnusable):
        bare_yes_no_read("Maybe.")
    # f4's one sentence cites nothing: "needs a citation?" asked three times (two re-asks), never answered.
    llm_server.script(Reply.literal("Perhaps."), Reply.literal("It depends."), Reply.literal("Unsure."))
    job_run_sync(argue_job_create(name="odd", bank="gold", topics=["f4"]).pk)
    assert llm_server.count == 3
    assert uncited("odd") == {("A", "f4", 0, "needs_citation"): "no"}
    assert JudgedReport.objects.get(source__name="odd").malformed == 1
    assert notes([("odd",)])[("odd",)][-1].startswith("1 yes/no answer(s) of the LLM were neither yes nor no")


def test_negative_assertions_are_an_option(llm_server, flow):
    # "There is no cat here." needs no citation (no capital after its first word): ignored, nothing covered.
    job_run_sync(argue_job_create(name="plain", bank="gold", topics=["f5"]).pk)
    assert uncited("plain") == {("A", "f5", 0, "needs_citation"): "no"}
    assert argue_scores_from_labels(name="plain").per_topic[("A", "f5")]["nugget_coverage"] == 0
    llm_server.reset()
    # With the option: a negative assertion ("no"), judged against every gold answer: "no cat" is in it.
    job_run_sync(argue_job_create(name="negatives", bank="gold", topics=["f5"], negatives=True).pk)
    assert llm_server.count == 2
    assert uncited("negatives") == {("A", "f5", 0, "negative"): "yes"}
    a = argue_scores_from_labels(name="negatives").per_topic[("A", "f5")]
    # covered 1/1; no sentence counted in sentence support (0/0 = 0), so F1 0
    assert (a["nugget_coverage"], a["rewarded"], a["sentence_support"], a["f1"]) == (1, 1, 0, 0)


def test_people_are_asked_the_same_questions_on_the_sentence_pages(flow):
    work = argue_work_give(
        topic=Topic.objects.get(pk="f1"), assessor=make_user(Role.ASSESSOR), by=make_user(Role.ORGANIZER)
    )
    assert argue_progress([work]) == {work.pk: (0, 12)}
    client = client_for(work.assessor)
    runs = {flow.a_f1.pk: "A", flow.b_f1.pk: "B"}
    pages = topic_plan(work).pages
    number = next(n for n, page in enumerate(pages, start=1) if (runs[page.answer_id], page.index) == ("A", 1))
    page = page_of(client, work, number)
    assert "does it need a citation" in page and "first instance of its claim" in page
    assert len(rows_of(page)) == 2 and "needs_citation" not in page  # rows named by opaque tokens only
    judge_all(client, work, [PEOPLE[(runs[page.answer_id], page.index)] for page in pages])
    work.refresh_from_db()
    submitted = client.post(reverse("argue:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    assert submitted.status_code == 200
    saved = UncitedAttestation.objects.get(work=work, sentence__index=1, asked="first_instance")
    assert (saved.created_by, saved.label) == (work.assessor, "yes")
    scores = argue_scores_from_labels(name="people")
    # As the LLM judged f1 (worked in test_the_scores_of_the_flow_worked_by_hand): F1 1/2, support 1/3.
    a = scores.per_topic[("A", "f1")]
    assert (a["f1"], a["sentence_support"], a["rewarded"], a["penalized"]) == pytest.approx((1 / 2, 1 / 3, 1, 2))
    assert scores.per_topic[("B", "f1")]["f1"] == 1
