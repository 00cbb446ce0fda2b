"""A hand-made collection for ARGUE-style judging: two topics, a gold bank, three reports.

Topic t1 (a request limited to 12 words) and its bank "gold":
  q0 "Who led the team?" vital, OR: "Ann" (d1) / "Bob" (d2)
  q1 "When did it start?" okay, AND: "May" (d1) / "June" (d3)
Topic t2 (no limit): q0 "What sound do cats make?" okay, OR: "purr" (d4)

Run A on t1: s0 "Ann led the team in May." [d1, d3]; s1 "Bob wrote the report." [d2];
s2 "June was cold." [] (6 + 4 + 3 words: the limit keeps s0 and s1).
Run A on t2: "Cats purr." [d4]. Run B on t1: an empty report; B has no report on t2.
"""

from dataclasses import dataclass

import pytest

from assessor.models import Answer, LabelSource
from nuggets.banks import Answer as GoldAnswer
from nuggets.banks import Question, bank_store
from reports.models import ReportRequest
from tests.builders import make_answer, make_batch, make_run, make_segment, make_topic, source_of

T1_BANK = [
    Question(
        "Who led the team?",
        importance="vital",
        rule="or",
        answers=(GoldAnswer("Ann", ("d1",)), GoldAnswer("Bob", ("d2",))),
    ),
    Question(
        "When did it start?",
        importance="okay",
        rule="and",
        answers=(GoldAnswer("May", ("d1",)), GoldAnswer("June", ("d3",))),
    ),
]
T2_BANK = [Question("What sound do cats make?", importance="okay", rule="or", answers=(GoldAnswer("purr", ("d4",)),))]


@dataclass
class ArgueCollection:
    a_t1: Answer
    a_t2: Answer
    b_t1: Answer


@pytest.fixture
def argue_collection(db) -> ArgueCollection:
    return argue_collection_make()


def argue_collection_make() -> ArgueCollection:
    t1, t2 = make_topic("t1", "who led the team"), make_topic("t2", "cats")
    ReportRequest.objects.create(topic=t1, title="The team", word_limit=12, imported_from=make_batch())
    d1 = make_segment("d1", "Ann led the team in May. It went well.")
    d2 = make_segment("d2", "Bob wrote the report.")
    d3 = make_segment("d3", "Nothing about the team.")
    d4 = make_segment("d4", "Cats purr. Dogs bark.")
    run_a, run_b = make_run("A"), make_run("B")
    a_t1 = make_answer(
        run_a, t1, [("Ann led the team in May.", [d1, d3]), ("Bob wrote the report.", [d2]), ("June was cold.", [])]
    )
    a_t2 = make_answer(run_a, t2, [("Cats purr.", [d4])])
    b_t1 = make_answer(run_b, t1, [])
    source = source_of("nuggets", "gold", kind=LabelSource.Kind.FILE)
    batch = make_batch()
    bank_store(topic_id="t1", name="gold", questions=T1_BANK, source=source, imported_from=batch)
    bank_store(topic_id="t2", name="gold", questions=T2_BANK, source=source, imported_from=batch)
    return ArgueCollection(a_t1=a_t1, a_t2=a_t2, b_t1=b_t1)
