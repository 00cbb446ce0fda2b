"""One answer labelled in every family by a person, an LLM job and an imported file: what the answer page's tests
read (tests/collection/test_answer_page.py, tests/e2e/test_answer_page.py, tests/metaeval/test_cell_items.py).

The labels, by item (the tests work out from them which items the sources disagree on):

- nugget assignment, nugget list `auto_edit`: n1 alice support, gpt support, nist support (all agree);
  n2 alice not_support, gpt support; n3 alice support alone; n4 gpt partial_support, nist not_support.
- support, first citation of each sentence: s0 alice FS, gpt FS, nist FS; s1 alice FS, gpt NS;
  s2 gpt PS, nist unjudged; s1's second citation: nist PS alone.
- grades, bank `bank1`: q1 alice 4, gpt 5 (with reasoning); q2 gpt 3, nist 3.
- preferences, against the runs `other.b` and `other.c`: b: alice (this, b) first better, gpt (b, this) second
  better (both: this better); c: gpt (this, c) tie, nist (c, this) first better (other better).
"""

from dataclasses import dataclass

from django.contrib.auth.models import User

from argue.models import JudgedReport
from assessor.models import Answer, Citation, ImportBatch, Job, LabelSource, Segment
from assessor.work.roles import Role
from assignment.models import AssignmentLabel
from grades.models import GradeLabel
from nuggets.models import Nugget
from preferences.models import Preference, PreferenceLabel
from support.models import SupportLabel
from tests.builders import make_answer, make_batch, make_nugget_set, make_run, make_segment, make_topic, make_user

PERSON, FILE = LabelSource.Kind.PERSON, LabelSource.Kind.FILE
GPT_REASONING = "The report states the cause and the date, but not the third point."
FIRST_SENTENCE = "Bees see ultraviolet light."


@dataclass
class Judges:
    alice: User
    job: Job
    batch: ImportBatch


@dataclass
class JudgedAnswer:
    answer: Answer
    others: dict[str, Answer]  # run id -> the other reports of the topic
    judges: Judges


def _judges() -> Judges:
    alice = make_user(Role.ASSESSOR, username="alice")
    job = Job.objects.create(kind="auto_support", output_name="gpt", model="gpt-4o", status=Job.Status.DONE)
    return Judges(alice=alice, job=job, batch=make_batch(kind="support", file_name="nist-labels.jsonl"))


def _maker(judges: Judges, family: str, who: str) -> dict:
    """The source and provenance fields of a label by `who` (alice, gpt or nist) in `family`."""
    if who == "alice":
        source, _ = LabelSource.objects.get_or_create(family=family, name="alice", defaults={"kind": PERSON})
        return {"source": source, "created_by": judges.alice, "seconds_spent": 12.0}
    if who == "gpt":
        source, _ = LabelSource.objects.get_or_create(
            family=family, name="gpt", defaults={"kind": LabelSource.Kind.LLM, "model": "gpt-4o", "job": judges.job}
        )
        return {"source": source, "job": judges.job}
    source, _ = LabelSource.objects.get_or_create(
        family=family, name="nist", defaults={"kind": FILE, "imported_from": judges.batch}
    )
    return {"source": source, "imported_from": judges.batch}


def _assignments(answer: Answer, judges: Judges) -> None:
    nuggets = list(
        make_nugget_set(answer.topic, texts=["cause", "date", "place", "third point"]).nuggets.order_by("position")
    )
    given = {
        0: {"alice": "support", "gpt": "support", "nist": "support"},
        1: {"alice": "not_support", "gpt": "support"},
    }
    given |= {2: {"alice": "support"}, 3: {"gpt": "partial_support", "nist": "not_support"}}
    for position, labels in given.items():
        for who, label in labels.items():
            AssignmentLabel.objects.create(
                answer=answer, nugget=nuggets[position], assigner=who,
                assigner_kind="manual" if who == "alice" else "auto", label=label, **_maker(judges, "assignment", who),
            )  # fmt: skip


def _support(answer: Answer, judges: Judges) -> None:
    first = {c.sentence.index: c for c in Citation.objects.filter(sentence__answer=answer, position=0)}
    second = Citation.objects.get(sentence__answer=answer, sentence__index=1, position=1)
    FS, PS, NS, UNJUDGED = (SupportLabel.Label.FS, SupportLabel.Label.PS, SupportLabel.Label.NS,
                            SupportLabel.Label.UNJUDGED)  # fmt: skip
    given = [
        (first[0], "alice", FS), (first[0], "gpt", FS), (first[0], "nist", FS), (first[1], "alice", FS),
        (first[1], "gpt", NS), (first[2], "gpt", PS), (first[2], "nist", UNJUDGED), (second, "nist", PS),
    ]  # fmt: skip
    kinds = {"alice": "scratch", "gpt": "auto", "nist": "scratch"}
    for citation, who, label in given:
        SupportLabel.objects.create(
            citation=citation, method=who, method_kind=kinds[who], label=label, **_maker(judges, "support", who)
        )


def _grades(answer: Answer, judges: Judges) -> None:
    bank = make_nugget_set(answer.topic, texts=["What caused it?", "When was it?"], name="bank1")
    q1, q2 = list(Nugget.objects.filter(nugget_set=bank).order_by("position"))
    given = [(q1, "alice", 4, ""), (q1, "gpt", 5, GPT_REASONING), (q2, "gpt", 3, ""), (q2, "nist", 3, "")]
    for question, who, grade, reasoning in given:
        GradeLabel.objects.create(
            topic=answer.topic, answer=answer, nugget=question, label=grade, reasoning=reasoning,
            **_maker(judges, "question_grades", who),
        )  # fmt: skip


def _preferences(answer: Answer, others: dict[str, Answer], judges: Judges) -> None:
    b, c = others["other.b"], others["other.c"]
    given = [
        (answer, b, "alice", Preference.FIRST), (b, answer, "gpt", Preference.SECOND),
        (answer, c, "gpt", Preference.TIE), (c, answer, "nist", Preference.FIRST),
    ]  # fmt: skip
    for first, second, who, label in given:
        PreferenceLabel.objects.create(
            topic=answer.topic, first=first, second=second, label=label, **_maker(judges, "preferences", who)
        )


def judged_answer() -> JudgedAnswer:
    """The answer of run `team.a` on topic `2024-77`, three sentences citing four segments, labelled in every
    family as the module's docstring says, and judged by the ARGUE-style source `nist`."""
    topic = make_topic("2024-77", query="why do bees see ultraviolet")
    segments: list[Segment] = [make_segment(f"doc_{n}#0_0", text=f"Passage {n}.") for n in range(4)]
    sentences = [(FIRST_SENTENCE, [segments[0]]), ("They have three receptors.", [segments[1], segments[2]])]
    sentences.append(("Flowers reflect it.", [segments[3]]))
    answer = make_answer(make_run("team.a"), topic, sentences)
    others = {run_id: make_answer(make_run(run_id), topic) for run_id in ("other.b", "other.c")}
    judges = _judges()
    _assignments(answer, judges)
    _support(answer, judges)
    _grades(answer, judges)
    _preferences(answer, others, judges)
    JudgedReport.objects.create(answer=answer, bank="bank1", kept=3, **_maker(judges, "argue", "nist"))
    return JudgedAnswer(answer=answer, others=others, judges=judges)
