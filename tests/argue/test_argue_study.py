"""The disagreement study on ARGUE-style judgments (argue.study), on the hand-made collection of conftest.py.

Two LLM sources that disagree on every judgment: "llm" (the fake server's rules) and "flip" (the same rules
turned round). On t1 both judged the citations d1, d3 (sentence 0) and d2 (sentence 1) and the gold answers
Ann, May, June (sentence 0, whose documents it cites) and Bob (sentence 1): 7 judgments. On t2, d4 and purr: 2.
"""

import hashlib
import random
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from argue.agreement import ANSWER_ITEM, SUPPORT_ITEM
from argue.judging import answer_key, argue_progress, row_token, support_key
from argue.kinds import ARGUE_WORK
from argue.llm import argue_job_create
from argue.study import gating_asks
from assessor.jobs.engine import job_run_sync
from assessor.models import Answer, AssessorWork, Citation, Job, Sentence
from assessor.work.judging import answer_token
from assessor.work.roles import Role
from metaeval.studies import StudyError, study_create, study_report
from metaeval.study_export import study_rows
from nuggets.banks import bank_questions
from tests.argue.pages import SCRIPT, client_for, post, rows_of
from tests.builders import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(two_llm_endpoints, argue_collection):
    job_run_sync(argue_job_create(name="llm", bank="gold", endpoint="alpha").pk)
    job_run_sync(argue_job_create(name="flip", bank="gold", endpoint="beta").pk)
    return argue_collection


def citation(answer, sentence: int, docid: str) -> int:
    return Citation.objects.get(sentence__answer=answer, sentence__index=sentence, segment_id=docid).pk


def gold(answer, sentence: int, text: str) -> tuple[int, int, int, int]:
    """The answer item of `sentence` and the gold answer `text` (the bank's question and the answer's index)."""
    sentence_id = Sentence.objects.get(answer=answer, index=sentence).pk
    for question in bank_questions("gold", [answer.topic_id])[answer.topic_id]:
        for index, given in enumerate(question.answers):
            if given.text == text:
                return (ANSWER_ITEM, sentence_id, question.pk, index)
    raise AssertionError(text)


def every_judgment(collection) -> dict[str, set[tuple[int, ...]]]:
    a1, a2 = collection.a_t1, collection.a_t2
    return {
        "t1": {
            (SUPPORT_ITEM, citation(a1, 0, "d1")),
            (SUPPORT_ITEM, citation(a1, 0, "d3")),
            (SUPPORT_ITEM, citation(a1, 1, "d2")),
            gold(a1, 0, "Ann"),
            gold(a1, 0, "May"),
            gold(a1, 0, "June"),
            gold(a1, 1, "Bob"),
        },
        "t2": {(SUPPORT_ITEM, citation(a2, 0, "d4")), gold(a2, 0, "purr")},
    }


def drawn(items: set, k: int, seed: int, topic: str) -> list:
    """The documented draw: the sorted items sampled by random.Random seeded with sha256('seed:topic')[:8]."""
    generator = random.Random(int.from_bytes(hashlib.sha256(f"{seed}:{topic}".encode()).digest()[:8], "big"))
    return generator.sample(sorted(items), min(k, len(items)))


def make_study(collection, **extra) -> tuple:
    assessor = make_user(Role.ASSESSOR, username="ivy")
    options = {"name": "again", "family": "argue", "source_a": "llm", "source_b": "flip", "nugget_set": "gold"}
    study = study_create(**{**options, **extra}, assessor=assessor, by=make_user(Role.ORGANIZER), seed=5, k=3)
    return study, assessor


def test_the_sample_is_drawn_from_the_judgments_the_two_sources_gave_differently(judged):
    study, assessor = make_study(judged)
    every = every_judgment(judged)
    assert study.sample == {topic: [list(item) for item in drawn(items, 3, 5, topic)] for topic, items in every.items()}
    works = {work.topic_id: work for work in AssessorWork.objects.filter(assessor=assessor)}
    assert set(works) == {"t1", "t2"}
    for topic, work in works.items():
        assert (work.kind, work.independent, work.nugget_set_name) == (ARGUE_WORK, True, "gold")
        assert work.items == study.sample[topic]
    # The progress counts the sampled judgments only: 3 on t1, 2 on t2.
    assert argue_progress(list(works.values())) == {works["t1"].pk: (0, 3), works["t2"].pk: (0, 2)}


def sentence_pages(client, work) -> list[tuple[int, str, int]]:
    """(page number, page, sentence id) of each sentence page of the work, in order."""
    pages, number = [], 1
    while True:
        response = client.get(reverse("argue:sentence", args=[work.pk, number]))
        page = response.content.decode()
        if response.status_code != 200 or not rows_of(page):
            return pages
        index = int(re.search(r'name="sentence" value="(\d+)"', page).group(1))
        token = re.search(r'name="answer" value="([0-9a-f]+)"', page).group(1)
        answer = next(a for a in Answer.objects.filter(topic_id=work.topic_id) if answer_token(a.pk) == token)
        pages.append((number, page, Sentence.objects.get(answer=answer, index=index).pk))
        number += 1
        if number > 50:
            raise AssertionError("no end of the pages")


def row_item(row: str, sentence_id: int) -> tuple[int, ...]:
    """A page's row (an opaque token) as argue.agreement names the judgment: one of the sentence's citations, or
    one of the gold answers of its topic's bank."""
    return next(item for item in sentence_items(sentence_id) if item_row(item) == row)


def sentence_items(sentence_id: int) -> list[tuple[int, ...]]:
    """Every judgment a sentence could be asked, as argue.agreement names them."""
    sentence = Sentence.objects.select_related("answer").get(pk=sentence_id)
    items: list[tuple[int, ...]] = [
        (SUPPORT_ITEM, pk) for pk in Citation.objects.filter(sentence=sentence).values_list("pk", flat=True)
    ]
    for question in bank_questions("gold", [sentence.answer.topic_id])[sentence.answer.topic_id]:
        items += [(ANSWER_ITEM, sentence_id, question.pk, index) for index in range(len(question.answers))]
    return items


def item_row(item: tuple[int, ...]) -> str:
    """The token the page names a judgment's row by."""
    key = support_key(item[1]) if item[0] == SUPPORT_ITEM else answer_key(item[2], item[3])
    return row_token(key)


def test_the_assessor_is_asked_the_sampled_judgments_only_and_nothing_else_is_saved(judged):
    study, assessor = make_study(judged)
    work = AssessorWork.objects.get(assessor=assessor, topic_id="t1")
    client = client_for(assessor)
    sampled = {tuple(item) for item in study.sample["t1"]}
    pages = sentence_pages(client, work)
    asked = {row_item(row, sentence) for _number, page, sentence in pages for row in rows_of(page)}
    assert asked == sampled
    for _number, page, _sentence in pages:
        assert 'data-current="yes"' not in page and 'data-current="no"' not in page  # blind to both sources
    # A judgment of a shown sentence that the sample does not hold is refused.
    refused = 0
    for number, page, sentence in pages:
        for item in every_judgment(judged)["t1"] - sampled:
            if item[0] == ANSWER_ITEM and item[1] == sentence:
                assert post(client, work, number, item_row(item), "yes", page=page).status_code == 400
                refused += 1
            if item[0] == SUPPORT_ITEM and Citation.objects.get(pk=item[1]).sentence_id == sentence:
                assert post(client, work, number, item_row(item), "yes", page=page).status_code == 400
                refused += 1
    assert refused == len(
        [item for item in every_judgment(judged)["t1"] - sampled if _sentence_of(item) in {p[2] for p in pages}]
    )
    # Every sampled judgment answered, the work is submitted.
    for number, page, _sentence in pages:
        for row in rows_of(page):
            assert post(client, work, number, row, "yes", page=page).status_code == 200
    work.refresh_from_db()
    assert client.post(reverse("argue:submit", args=[work.pk]), {"version": work.version}, **SCRIPT).status_code == 200


def _sentence_of(item: tuple[int, ...]) -> int:
    return item[1] if item[0] == ANSWER_ITEM else Citation.objects.get(pk=item[1]).sentence_id


def test_the_report_sets_kappa_and_sides_from_the_judgments_as_counted_by_hand(judged):
    study, assessor = make_study(judged)
    said = _labels("llm")
    # The assessor says what "llm" said on t1's sample and submits; t2 stays open (not counted).
    work = AssessorWork.objects.get(assessor=assessor, topic_id="t1")
    client = client_for(assessor)
    for number, page, sentence in sentence_pages(client, work):
        for row in rows_of(page):
            assert post(client, work, number, row, said[row_item(row, sentence)], page=page).status_code == 200
    work.refresh_from_db()
    assert client.post(reverse("argue:submit", args=[work.pk]), {"version": work.version}, **SCRIPT).status_code == 200
    report = study_report(study)
    assert report.labels == ["yes", "no"] and report.open_topics == ["t2"]
    assessor_judge = next(judge for judge in report.judges if judge.role == "assessor")
    assert set(assessor_judge.labels) == {tuple(item) for item in study.sample["t1"]}
    # a and b disagree on all 5 sampled items; the assessor sides with a on each of t1's three.
    (sided,) = report.sided
    assert (sided.with_a, sided.with_b, sided.neither) == (3, 0, 0)
    pairs = {(pair.first.role, pair.second.role): pair.confusion for pair in report.pairs}
    assert pairs[("a", "b")].total == 5 and pairs[("a", "b")].agreement == 0.0
    assert pairs[("a", "assessor")].total == 3 and pairs[("a", "assessor")].agreement == 1.0
    assert pairs[("b", "assessor")].agreement == 0.0


def _labels(name: str) -> dict[tuple[int, ...], str]:
    from argue.agreement import item_labels

    return {item: label for per_topic in item_labels(name).values() for item, label in per_topic.items()}


def test_an_llm_judges_the_sampled_reports_with_the_familys_prompts(judged):
    study, _ = make_study(judged, llm_name="again-llm", llm_endpoint="alpha")
    job = Job.objects.get(pk=study.llm_job_id)
    # The reports the sampled judgments are about; every sampled gold answer is of a cited document: no check_all.
    answers = {judged.a_t1.pk, judged.a_t2.pk}
    assert {item.payload["answer"] for item in job.items.all()} == answers
    assert job.params["check_all"] is False and job.kind == "argue"
    job_run_sync(job.pk)
    report = study_report(study)
    llm = next(judge for judge in report.judges if judge.role == "llm")
    # alpha judges as "llm" did: the LLM judge sides with a on every sampled item.
    sided = next(s for s in report.sided if s.judge.role == "llm")
    assert sided.with_a == len(llm.labels) == 5 and sided.with_b == 0


def test_check_all_when_a_sampled_gold_answer_is_not_of_a_cited_document(judged):
    # Bob's document d2 is not cited by sentence 0: the default gating does not ask it there.
    ann, bob_in_s0 = gold(judged.a_t1, 0, "Ann"), gold(judged.a_t1, 0, "Bob")
    assert gating_asks([ann], "gold") is True
    assert gating_asks([ann, bob_in_s0], "gold") is False
    assert gating_asks([(SUPPORT_ITEM, citation(judged.a_t1, 0, "d1"))], "gold") is True


def test_the_export_names_each_judgment_its_report_and_who_made_it(judged):
    study, _ = make_study(judged)
    rows = list(study_rows(study))
    # Sources a and b on each of the 5 sampled items; the assessor has judged nothing yet.
    assert len(rows) == 10 and {row.judge for row in rows} == {"a", "b"}
    llm_job = Job.objects.get(output_name="llm")
    for row in rows:
        assert row.run_id == "A" and row.answer_id in (judged.a_t1.pk, judged.a_t2.pk)
        assert row.item.startswith(("citation ", "sentence "))
        if row.judge == "a":
            assert row.made_by == f"job:{llm_job.pk}" and row.endpoint == "alpha"


def test_the_command_line_makes_an_argue_study_and_names_what_is_missing(judged):
    make_user(Role.ASSESSOR, username="ivy")
    with pytest.raises(CommandError, match="names the question bank both sources labelled"):
        call_command(
            "study", "--name", "s1", "--a", "argue:llm", "--b", "argue:flip", "--seed", "1", "--assessor", "ivy"
        )
    with pytest.raises(CommandError, match="support:NAME or assignment:NAME or argue:NAME"):
        call_command(
            "study", "--name", "s1", "--a", "argue-x:llm", "--b", "argue:flip", "--seed", "1", "--assessor", "ivy"
        )
    out = StringIO()
    call_command(
        "study", "--name", "s1", "--a", "argue:llm", "--b", "argue:flip", "--nuggets", "gold", "--seed", "1",
        "--k", "2", "--assessor", "ivy", stdout=out,
    )  # fmt: skip
    assert "study s1: 4 items on 2 topics" in out.getvalue()


def test_a_study_of_a_family_without_study_parts_is_refused(judged):
    with pytest.raises(StudyError, match="A study compares support labels, nugget assignment labels, ARGUE-style"):
        make_study(judged, family="grades")
