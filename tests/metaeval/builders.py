"""Small hand-built conditions for the meta-evaluation tests (offered as fixtures by conftest.py)."""

from assessor.scoring.kept import scores_refresh
from assignment import kinds as assignment_kinds
from assignment.models import AssignmentLabel
from nuggets.models import Nugget, NuggetSet
from support import kinds as support_kinds
from support.models import SupportLabel
from tests.builders import make_answer, make_batch, make_run, make_segment, make_topic, source_of

S, P, N = "support", "partial_support", "not_support"

# Two topics; the nuggets of each as (text, importance).
NUGGETS = {
    "t1": [("the sky is blue", "vital"), ("water is wet today", "vital"), ("grass grows", "okay")],
    "t2": [("one two three four five", "vital"), ("six seven", "okay")],
}
# Labels of each run's answer, nugget by nugget, by the two assigners.
MANUAL = {
    ("r1", "t1"): [S, S, N], ("r2", "t1"): [S, N, N], ("r3", "t1"): [N, N, S],
    ("r1", "t2"): [S, S], ("r2", "t2"): [N, S], ("r3", "t2"): [P, N],
}  # fmt: skip
AUTO = {
    ("r1", "t1"): [S, P, P], ("r2", "t1"): [S, N, P], ("r3", "t1"): [P, N, S],
    ("r1", "t2"): [S, S], ("r2", "t2"): [P, S], ("r3", "t2"): [N, N],
}  # fmt: skip


def build_conditions() -> dict:
    batch = make_batch(kind=assignment_kinds.IMPORT_ASSIGNMENTS)
    topics = {topic_id: make_topic(topic_id) for topic_id in NUGGETS}
    runs = {run_id: make_run(run_id) for run_id in ("r1", "r2", "r3")}
    nuggets = {}
    for topic_id, rows in NUGGETS.items():
        nugget_set = NuggetSet.objects.create(
            topic=topics[topic_id], kind="auto_edit", name="auto_edit", source=source_of("nuggets", "auto_edit"),
            imported_from=batch,
        )  # fmt: skip
        nuggets[topic_id] = [
            Nugget.objects.create(nugget_set=nugget_set, position=i, text=text, importance=importance, imported_from=batch)
            for i, (text, importance) in enumerate(rows)
        ]
    answers = {}
    for run_id, topic_id in MANUAL:
        answers[(run_id, topic_id)] = make_answer(runs[run_id], topics[topic_id])
    for assigner, table in (("manual", MANUAL), ("auto", AUTO)):
        AssignmentLabel.objects.bulk_create(
            AssignmentLabel(
                answer=answers[key], nugget=nugget, assigner=assigner, assigner_kind=assigner, label=label,
                source=source_of("assignment", assigner), imported_from=batch,
            )
            for key, labels in table.items()
            for nugget, label in zip(nuggets[key[1]], labels, strict=True)
        )  # fmt: skip
    scores_refresh(discover=True)  # as the import of these rows would
    return {"topics": topics, "runs": runs, "answers": answers}


def build_support() -> None:
    batch = make_batch(kind=support_kinds.IMPORT_SUPPORT)
    topic = make_topic("t9")
    segment = make_segment()
    citations = []
    for run_id in ("s1", "s2"):
        answer = make_answer(
            make_run(run_id),
            topic,
            [("one cites.", [segment]), ("two cites.", [segment, segment]), ("three cites.", [segment]), ("none.", [])],
        )
        citations += [c for s in answer.sentences.all() for c in s.citations.order_by("position")]
    # First citations: s1 sentences 0,1,2 and s2 sentences 0,1,2 (the second citation of sentence 1 is never judged).
    firsts = [c for c in citations if c.position == 0]
    scratch = [2, 1, 0, 2, -1, 1]
    auto = [2, 2, 0, 1, 2, 1]
    for method, labels in (("scratch", scratch), ("auto", auto)):
        SupportLabel.objects.bulk_create(
            SupportLabel(
                citation=c, method=method, method_kind=method, label=label, source=source_of("support", method),
                imported_from=batch,
            )  # fmt: skip
            for c, label in zip(firsts, labels, strict=True)
        )
    scores_refresh(discover=True)  # as the import of these rows would
