"""A grade source's run means are over every request of the family, a request without a bank, not graded, or
without the run's report counting 0 (PROTOCOL.md, the second family's grading: "as autojudge-base's leaderboard
`fix_aggregate` computes it"). Checked against autojudge-base 1.0.0's own LeaderboardBuilder, loaded by path
(tests/metaeval/autojudge_reference.py), on a case worked by hand and on seeded random collections; the figures
checked are those every page reads: the kept scores, those from the labels, the meta-evaluation's source and the
`export_grades --scores` file."""

import io
import random
from dataclasses import dataclass, field

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor.models import Topic
from assessor.scoring.kept import scores_refresh
from assessor.scoring.lifecycle import open_work_included
from assessor.scoring.scores import Scores
from grades.kinds import GRADES_FAMILY
from grades.measures import METRICS
from grades.models import GradeLabel
from grades.scoring import grade_scores, grade_scores_from_labels
from metaeval.sources import source_load
from nuggets.banks import Question, bank_store
from nuggets.kinds import IMPORT_NUGGETS
from reports.models import ReportRequest
from tests.builders import make_answer, make_batch, make_run, make_topic, read_scores_tsv, source_of
from tests.metaeval.autojudge_reference import reference_modules

pytestmark = pytest.mark.django_db


def measures_by_hand(grades: list[int], bank_size: int) -> dict[str, float]:
    """PROTOCOL.md's per-report scores written out: N the bank's size, ungraded questions 0."""
    covered = {threshold: sum(1 for grade in grades if grade >= threshold) for threshold in range(1, 6)}
    return {
        "maxgrade": float(max(grades, default=0)),
        "avggrade": sum(grades) / bank_size,
        **{f"cover{t}": covered[t] / bank_size for t in covered},
        **{f"covered{t}": float(covered[t]) for t in covered},
    }


@dataclass
class Collection:
    """What a collection holds, as the test made it: the requests the reference is told of, and each graded
    report's grades with its bank's size."""

    requests: list[str]
    graded: dict[tuple[str, str], tuple[list[int], int]] = field(default_factory=dict)


def reference_means(collection: Collection) -> dict[str, dict[str, float]]:
    """Each run's `all` row as autojudge-base's LeaderboardBuilder makes it, over the collection's requests."""
    with reference_modules() as reference:
        board = reference.leaderboard
        builder = board.LeaderboardBuilder(board.LeaderboardSpec(tuple(board.MeasureSpec(m) for m in METRICS)))
        for (run, topic), (grades, size) in sorted(collection.graded.items()):
            builder.add(run_id=run, topic_id=topic, values=measures_by_hand(grades, size))
        built = builder.build(expected_topic_ids=collection.requests, on_missing="fix_aggregate")
        return {entry.run_id: dict(entry.values) for entry in built.entries if entry.topic_id == "all"}


def request(topic_id: str) -> None:
    ReportRequest.objects.create(topic=make_topic(topic_id), title=f"request {topic_id}", imported_from=make_batch())


def bank(topic_id: str, size: int) -> list:
    batch = make_batch(kind=IMPORT_NUGGETS)
    stored = bank_store(
        topic_id=topic_id,
        name="bank",
        questions=[Question(text=f"{topic_id} question {n}?") for n in range(size)],
        source=source_of("nuggets", "bank", imported_from=batch),
        imported_from=batch,
    )
    return list(stored.nuggets.order_by("position"))


def grade(answer, questions: list, grades: list[int | None]) -> None:
    batch = make_batch(kind="grades_test")
    source = source_of(GRADES_FAMILY, "src", imported_from=batch)
    for question, given in zip(questions, grades, strict=True):
        if given is not None:
            GradeLabel.objects.create(
                source=source, topic_id=answer.topic_id, answer=answer, nugget=question, label=given,
                imported_from=batch,
            )  # fmt: skip


def exported_means(*options: str) -> dict[str, dict[str, float]]:
    out = io.StringIO()
    call_command("export_grades", "--name", "src", "--scores", *options, stdout=out, stderr=io.StringIO())
    table = read_scores_tsv(out.getvalue())
    means: dict[str, dict[str, float]] = {}
    for (run, topic, metric), value in table.items():
        if topic == "all":
            means.setdefault(run, {})[metric] = value
    return means


def every_figure() -> list[tuple[str, dict[str, dict[str, float]]]]:
    """The runs' means as each reader of the grade scores gets them."""
    with open_work_included(False):
        kept = grade_scores(name="src")
        _, metaeval = source_load("grades:src")
    return [
        ("kept", kept.run_means),
        ("from the labels", grade_scores_from_labels(name="src").run_means),
        ("meta-evaluation", metaeval.run_means),
        ("export_grades --scores", exported_means()),
    ]


def test_a_request_without_a_bank_counts_0_as_autojudge_bases_leaderboard_counts_it(organizer):
    # Two requests, a bank of 2 questions on the first only; run r graded 5 on both: maxgrade 5 on `first`, and no
    # bank on `second`. Over the source's one graded topic that was 5.0; over the two requests (5 + 0) / 2 = 2.5.
    request("first")
    request("second")
    run = make_run("r")
    grade(make_answer(run, ReportRequest.objects.get(pk="first").topic), bank("first", 2), [5, 5])
    make_answer(run, ReportRequest.objects.get(pk="second").topic)
    scores_refresh(family="grades", discover=True)
    reference = reference_means(Collection(requests=["first", "second"], graded={("r", "first"): ([5, 5], 2)}))
    assert reference["r"]["maxgrade"] == 2.5 and reference["r"]["cover4"] == 0.5 and reference["r"]["avggrade"] == 2.5
    figures = every_figure()
    for reader, means in figures:
        r = means["r"]
        assert (reader, r["maxgrade"], r["cover4"], r["covered4"]) == (reader, 2.5, 0.5, 1.0)
    assert len(figures) == 4
    assert grade_scores(name="src").topics == ["first", "second"]
    page = organizer.get(reverse("collection:grade_leaderboard") + "?source=src").content.decode()
    assert '(<span id="request-count">2</span> requests)' in page


def random_collection(seed: int) -> Collection:
    """Requests, some with a bank, some of those graded by the source (each graded report on some of its
    questions); runs missing reports; a TREC 2024 topic graded on a bank without a request file's line (a request
    too), and one nobody graded (the first family's, not a request of this one)."""
    rng = random.Random(seed)
    requests = [f"q{n}" for n in range(rng.randint(4, 7))]
    for topic_id in requests:
        request(topic_id)
    make_topic("trec-graded")
    make_topic("trec-other")
    runs = [make_run(f"run{n}") for n in range(rng.randint(3, 6))]
    banked = rng.sample(requests, rng.randint(2, len(requests) - 1)) + ["trec-graded"]
    graded = set(rng.sample(banked[:-1], rng.randint(1, len(banked) - 2))) | {"trec-graded"}
    collection = Collection(requests=requests + ["trec-graded"])
    for topic_id in requests + ["trec-graded", "trec-other"]:
        questions = bank(topic_id, rng.randint(1, 4)) if topic_id in banked else []
        for run in runs:
            if rng.random() < 0.3:
                continue  # the run has no report on this topic
            answer = make_answer(run, Topic.objects.get(pk=topic_id))
            if topic_id not in graded:
                continue
            given: list[int | None] = [rng.randint(0, 5) if rng.random() < 0.8 else None for _ in questions]
            given[0] = rng.randint(0, 5)  # a report of a graded topic has a grade, so a row
            grade(answer, questions, given)
            collection.graded[(run.run_id, topic_id)] = ([g for g in given if g is not None], len(questions))
    # Kept as jobs refresh them: topic by topic, so that the kept topics are the graded ones only.
    for topic_id in sorted(graded):
        scores_refresh(family="grades", columns=("src",), topics=[topic_id])
    return collection


@pytest.mark.parametrize("seed", [3, 17, 29, 41, 58])
def test_every_grade_figure_is_autojudge_bases_fix_aggregate_mean_over_every_request(seed):
    collection = random_collection(seed)
    reference = reference_means(collection)
    kept = grade_scores(name="src")
    assert kept.topics == sorted(collection.requests) and "trec-other" not in kept.topics
    assert sorted(reference) == kept.runs
    checked = 0
    for reader, means in every_figure():
        assert sorted(means) == sorted(reference), reader
        for run, expected in reference.items():
            assert set(means[run]) == set(METRICS), reader
            for metric in METRICS:
                where = (reader, run, metric)
                assert means[run][metric] == pytest.approx(expected[metric], rel=1e-12, abs=1e-12), where
                checked += 1
    assert checked == len(reference) * 4 * len(METRICS) > 0
    # A request the source has no row on (no bank, not graded, no report) is one of the means' denominator.
    assert len(set(collection.requests) - {topic for _, topic in collection.graded}) >= 1
    assert_rows_hand_computed(kept, collection)


def assert_rows_hand_computed(scores: Scores, collection: Collection) -> None:
    assert set(scores.per_topic) == set(collection.graded)
    for key, (grades, size) in collection.graded.items():
        assert scores.per_topic[key] == pytest.approx(measures_by_hand(grades, size))
