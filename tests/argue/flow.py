"""A hand-made collection for ARGUE's whole flow (no request limits), against the bank "gold".

Topic f1: q0 "Who led the team?" vital, OR: "Ann" (d1) / "Zed" (no document: dropped); q1 "Why?" without gold
answers (dropped). Run A's report:
  s0 "Ann led the team." [d1]    s1 "The team met in Paris." []    s2 "The team met." []
  s3 "Ann led the Team." []      s4 "Bob did not lead." [d1]
Run B's report: s0 "Ann led the team." [d1].
Topic f2, a no-reference bank: q0 "What sound do cats make?" okay, OR: "purr" / "meow", neither with a document.
Run A's report: "Cats purr." [d4]; run B has none.
Topic f3, a bank with no gold answer at all (not scored): q0 "Why?". Run A's report: "Nothing here." [d4].
Topic f4: q0 "Where?" OR: "Paris" (d1). Run A's report: "Paris is big." [].
Topic f5: q0 "Is there a cat?" OR: "no cat" (d4). Run A's report: "There is no cat here." [].

d1 is "Ann led the team. Bob helped.", d4 "Cats purr. Dogs bark.".
"""

from dataclasses import dataclass

from assessor.models import Answer, LabelSource
from nuggets.banks import Answer as GoldAnswer
from nuggets.banks import Question, bank_store
from tests.builders import make_answer, make_batch, make_run, make_segment, make_topic, source_of

F1_TEXTS = ["Ann led the team.", "The team met in Paris.", "The team met.", "Ann led the Team.", "Bob did not lead."]
BANKS = {
    "f1": [
        Question(
            "Who led the team?",
            importance="vital",
            rule="or",
            answers=(GoldAnswer("Ann", ("d1",)), GoldAnswer("Zed")),
        ),
        Question("Why?", importance="okay"),
    ],
    "f2": [
        Question(
            "What sound do cats make?", importance="okay", rule="or", answers=(GoldAnswer("purr"), GoldAnswer("meow"))
        )
    ],
    "f3": [Question("Why?", importance="okay")],
    "f4": [Question("Where?", importance="okay", rule="or", answers=(GoldAnswer("Paris", ("d1",)),))],
    "f5": [Question("Is there a cat?", importance="okay", rule="or", answers=(GoldAnswer("no cat", ("d4",)),))],
}


@dataclass
class FlowCollection:
    a_f1: Answer
    b_f1: Answer
    a_f2: Answer
    a_f3: Answer
    a_f4: Answer
    a_f5: Answer


def flow_collection_make() -> FlowCollection:
    topics = {topic: make_topic(topic, f"topic {topic}") for topic in BANKS}
    d1 = make_segment("d1", "Ann led the team. Bob helped.")
    d4 = make_segment("d4", "Cats purr. Dogs bark.")
    run_a, run_b = make_run("A"), make_run("B")
    cited = {"Ann led the team.": [d1], "Bob did not lead.": [d1]}
    a_f1 = make_answer(run_a, topics["f1"], [(text, cited.get(text, [])) for text in F1_TEXTS])
    b_f1 = make_answer(run_b, topics["f1"], [("Ann led the team.", [d1])])
    a_f2 = make_answer(run_a, topics["f2"], [("Cats purr.", [d4])])
    a_f3 = make_answer(run_a, topics["f3"], [("Nothing here.", [d4])])
    a_f4 = make_answer(run_a, topics["f4"], [("Paris is big.", [])])
    a_f5 = make_answer(run_a, topics["f5"], [("There is no cat here.", [])])
    source = source_of("nuggets", "gold", kind=LabelSource.Kind.FILE)
    batch = make_batch()
    for topic, questions in BANKS.items():
        bank_store(topic_id=topic, name="gold", questions=questions, source=source, imported_from=batch)
    return FlowCollection(a_f1=a_f1, b_f1=b_f1, a_f2=a_f2, a_f3=a_f3, a_f4=a_f4, a_f5=a_f5)


# The people's answers, by (run, sentence index), row by row as the page asks them: a citing sentence its
# documents then its gold answers; an uncited one "needs a citation?" then "first instance?" (not of s0).
PEOPLE = {
    ("A", 0): ["yes", "yes"],
    ("A", 1): ["yes", "yes"],
    ("A", 2): ["no", "yes"],  # needs none: its "first instance" counts for nothing
    ("A", 3): ["yes", "no"],
    ("A", 4): ["no", "no"],
    ("B", 0): ["yes", "yes"],
}
