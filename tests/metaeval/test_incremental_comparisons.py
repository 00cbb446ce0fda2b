"""A kept comparison brought up to date by the cells that changed equals the same comparison computed in full.

Random conditions (runs x topics, some answers unlabelled by one assigner or both), a kept comparison, then
random changes made as the writes make them (labels changed, an answer's labels deleted or added, a topic newly
labelled by one assigner), each followed by the refresh the write calls; the worker's update of the kept page is
compared, figure by figure, with a full computation of the same query from the labels as they are then.
"""

import math
import pickle
import random
import zlib
from fractions import Fraction

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assessor.models import KeptAnswerScore
from assessor.scoring.kept import scores_refresh
from assignment import kinds as assignment_kinds
from assignment.models import AssignmentLabel
from metaeval import comparison_page
from metaeval.comparison_page import comparison_compute, kept_query, page_compute, page_shown
from metaeval.models import KeptComparison
from metaeval.stats import TauResult
from nuggets.models import Nugget, NuggetSet
from tests.builders import make_answer, make_batch, make_run, make_topic, source_of

LABELS = ("support", "partial_support", "not_support")
IMPORTANCE = ("vital", "okay")
A, B = "auto_edit/manual", "auto_edit/auto"


def _labels(rng: random.Random, nuggets: list[Nugget], answer, assigner: str, batch) -> list[AssignmentLabel]:
    return [
        AssignmentLabel(
            answer=answer,
            nugget=nugget,
            assigner=assigner,
            assigner_kind=assigner,
            label=rng.choice(LABELS),
            source=source_of("assignment", assigner),
            imported_from=batch,
        )  # fmt: skip
        for nugget in nuggets
    ]


def build_random(rng: random.Random, *, runs: int = 9, topics: int = 8) -> dict:
    batch = make_batch(kind=assignment_kinds.IMPORT_ASSIGNMENTS)
    topic_rows = [make_topic(f"t{i:02d}") for i in range(topics)]
    run_rows = [make_run(f"r{i:02d}") for i in range(runs)]
    nuggets = {}
    for topic in topic_rows:
        nugget_set = NuggetSet.objects.create(
            topic=topic, kind="auto_edit", name="auto_edit", source=source_of("nuggets", "auto_edit"),
            imported_from=batch,
        )  # fmt: skip
        nuggets[topic.id] = [
            Nugget.objects.create(
                nugget_set=nugget_set,
                position=i,
                text=f"nugget {i}",
                importance=rng.choice(IMPORTANCE),
                imported_from=batch,
            )  # fmt: skip
            for i in range(rng.randint(2, 5))
        ]
    answers = {}
    labels = []
    for run in run_rows:
        for topic in topic_rows:
            if rng.random() < 0.1:  # the run did not answer the topic
                continue
            answer = answers[(run.run_id, topic.id)] = make_answer(run, topic)
            for assigner in ("manual", "auto"):
                # The last topic starts unlabelled by the manual assigner: it becomes shared later.
                if (assigner == "manual" and topic is topic_rows[-1]) or rng.random() < 0.08:
                    continue
                labels += _labels(rng, nuggets[topic.id], answer, assigner, batch)
    AssignmentLabel.objects.bulk_create(labels)
    scores_refresh(discover=True)
    return {"answers": answers, "nuggets": nuggets, "batch": batch, "topics": [t.id for t in topic_rows]}


def random_change(rng: random.Random, data: dict) -> None:
    """One write of one of the two assigners, and the refresh it calls (one topic's, or one answer's)."""
    assigner = rng.choice(("manual", "auto"))
    columns = ("auto_edit", assigner)
    what = rng.random()
    (run_id, topic_id), answer = rng.choice(sorted(data["answers"].items()))
    labels = AssignmentLabel.objects.filter(answer=answer, assigner=assigner)
    if what < 0.5:  # labels of one topic changed (an assessor's saves, an LLM job's answers)
        topic_labels = list(AssignmentLabel.objects.filter(answer__topic_id=topic_id, assigner=assigner))
        for label in rng.sample(topic_labels, k=min(len(topic_labels), rng.randint(1, 6))):
            label.label = rng.choice(LABELS)
            label.save(update_fields=["label"])
        scores_refresh(family="conditions", columns=columns, topics=[topic_id])
    elif what < 0.75 and labels.exists():  # an answer's labels gone: its cell goes
        labels.delete()
        scores_refresh(family="conditions", columns=columns, answers=[answer.id])
    else:  # an answer labelled: its cell comes (or changes)
        labels.delete()
        AssignmentLabel.objects.bulk_create(_labels(rng, data["nuggets"][topic_id], answer, assigner, data["batch"]))
        scores_refresh(family="conditions", columns=columns, answers=[answer.id])


def _same(x: object, y: object) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return (math.isnan(x) and math.isnan(y)) or x == y
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, list | tuple) and isinstance(y, list | tuple):
        return len(x) == len(y) and all(_same(p, q) for p, q in zip(x, y, strict=True))
    return x == y


def _tau_fields(tau: TauResult) -> dict:
    return {name: getattr(tau, name) for name in TauResult.__dataclass_fields__}


def assert_pages_equal(kept, full) -> None:
    """Every figure of the kept page equals the full computation's, to the last bit (NaN where it is NaN)."""
    assert [tau.metric for tau in kept.comparison.taus] == [tau.metric for tau in full.comparison.taus]
    for mine, theirs in zip(kept.comparison.taus, full.comparison.taus, strict=True):
        for name, value in _tau_fields(theirs).items():
            assert _same(getattr(mine, name), value), (mine.metric, name, getattr(mine, name), value)
    assert kept.comparison.confusion.counts == full.comparison.confusion.counts
    assert kept.comparison.confusion.missing_a == full.comparison.confusion.missing_a
    assert kept.comparison.confusion.missing_b == full.comparison.confusion.missing_b
    assert _same(kept.comparison.confusion.alpha_ordinal, full.comparison.confusion.alpha_ordinal)
    assert _same(kept.described, full.described)
    assert kept.metric == full.metric


def _kept_page(key: str):
    row = KeptComparison.objects.get(key=key)
    return pickle.loads(bytes(row.page)), pickle.loads(bytes(row.plots))  # noqa: S301 (the test's own rows)


def _exact_mean(data: dict, run_id: str, assigner: str, topics: list[str]) -> Fraction:
    """A run's Vstrict mean over `topics`, from its labels by hand (docs/scores.md): each answer's vital nuggets with
    support count 1, partial and no support 0, over its vital nuggets; a topic it has no labels on counts 0."""
    total = Fraction(0)
    for topic in topics:
        answer = data["answers"].get((run_id, topic))
        labels = dict(
            AssignmentLabel.objects.filter(answer=answer, assigner=assigner).values_list("nugget_id", "label")
        )
        vital = [n for n in data["nuggets"][topic] if n.importance == "vital"]
        if answer is None or not labels or not vital:
            continue
        total += Fraction(sum(1 for n in vital if labels.get(n.id) == "support"), len(vital))
    return total / len(topics)


OPTIONS = [
    {"bootstrap": "40", "seed": "3"},
    {"bootstrap": "0", "missing": "skip", "top_k": "3"},
    {"bootstrap": "25", "topics": "t01 t02 t03 t05 t07", "top_k_of": "b", "top_k": "4"},
]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("seed", [1, 2])
def test_the_update_by_changed_cells_equals_a_full_computation(db, options, seed, monkeypatch):
    rng = random.Random(seed)
    data = build_random(rng)
    query = {"a": A, "b": B, "metric": "Vstrict", **options}
    page_shown(query, here=True)
    key = kept_query(query).key
    full_computations = []
    real = comparison_page._page_computed
    monkeypatch.setattr(comparison_page, "_page_computed", lambda params: full_computations.append(1) or real(params))
    for _ in range(8):
        random_change(rng, data)
        assert comparison_compute(key) is True
        assert not full_computations  # brought up to date by its cells, not computed again
        kept, (metric, plots) = _kept_page(key)
        assert kept.complete  # the worker completed it next
        full = real(query)[0]
        assert_pages_equal(kept, full)
        assert metric == full.metric and _same(plots, full.plots)


def test_the_run_means_are_the_labels_exact_means(db):
    """The run level of the kept page after changes: each run's mean is its exact Vstrict mean from the labels, as
    computed by hand here (the plot's points are the run means of the shared runs, over the shared topics)."""
    rng = random.Random(7)
    data = build_random(rng, runs=6, topics=5)
    query = {"a": A, "b": B, "metric": "Vstrict", "bootstrap": "0"}
    page_shown(query, here=True)
    key = kept_query(query).key
    for _ in range(6):
        random_change(rng, data)
        comparison_compute(key)
    _, (_, plots) = _kept_page(key)
    labelled = {
        assigner: set(AssignmentLabel.objects.filter(assigner=assigner).values_list("answer__topic_id", flat=True))
        for assigner in ("manual", "auto")
    }
    shared_topics = sorted(labelled["manual"] & labelled["auto"])
    runs = sorted(
        set(AssignmentLabel.objects.filter(assigner="manual").values_list("answer__run__run_id", flat=True))
        & set(AssignmentLabel.objects.filter(assigner="auto").values_list("answer__run__run_id", flat=True))
    )
    expected = [
        (float(_exact_mean(data, run, "manual", shared_topics)), float(_exact_mean(data, run, "auto", shared_topics)))
        for run in runs
    ]
    assert plots["run"][0] == expected


def test_the_update_reads_the_values_of_the_changed_rows_only(db):
    rng = random.Random(3)
    data = build_random(rng)
    query = {"a": A, "b": B, "metric": "Vstrict", "bootstrap": "0"}
    page_shown(query, here=True)
    key = kept_query(query).key
    topic = data["topics"][2]
    label = AssignmentLabel.objects.filter(answer__topic_id=topic, assigner="auto").first()
    label.label = "support" if label.label != "support" else "not_support"
    label.save(update_fields=["label"])
    scores_refresh(family="conditions", columns=("auto_edit", "auto"), topics=[topic])
    table = KeptAnswerScore._meta.db_table
    with CaptureQueriesContext(connection) as queries:
        assert comparison_compute(key) is True
    reads = [q["sql"] for q in queries.captured_queries if table in q["sql"] and '"values"' in q["sql"]]
    # The changed source's rows of the changed topic, the one topic its refresh rewrote; nothing of the other.
    assert len(reads) == 1 and f"IN ('{topic}')" in reads[0]
    assert_pages_equal(_kept_page(key)[0], page_compute(query))


def test_a_run_new_to_both_sources_is_computed_in_full(db):
    rng = random.Random(5)
    data = build_random(rng)
    query = {"a": A, "b": B, "metric": "Vstrict", "bootstrap": "0"}
    page_shown(query, here=True)
    key = kept_query(query).key
    run = make_run("r99")
    topic_id = data["topics"][0]
    from assessor.models import Topic

    answer = make_answer(run, Topic.objects.get(pk=topic_id))
    AssignmentLabel.objects.bulk_create(_labels(rng, data["nuggets"][topic_id], answer, "auto", data["batch"]))
    scores_refresh(family="conditions", columns=("auto_edit", "auto"), answers=[answer.id])
    assert comparison_compute(key) is True
    kept, _ = _kept_page(key)
    assert_pages_equal(kept, page_compute(query))
    assert KeptComparison.objects.get(key=key).cells is not None  # kept anew, to be updated next time


def test_the_page_says_what_is_of_the_labels_before_until_the_worker_completes_it(db, organizer_client):
    from django.urls import reverse
    from django.utils import timezone

    rng = random.Random(11)
    data = build_random(rng, runs=5, topics=4)
    query = {"a": A, "b": B, "metric": "Vstrict", "bootstrap": "20"}
    page_shown(query, here=True)
    random_change(rng, data)
    kept = kept_query(query)
    row = KeptComparison.objects.get(key=kept.key)
    page, cells = comparison_page.page_update(kept, row)
    computed_at = timezone.now()
    comparison_page.page_keep(kept, page, computed_at=computed_at, seconds=0.1, cells=cells)
    url = reverse("metaeval:index")
    assert 'id="completing"' in organizer_client.get(url, query).content.decode()
    assert comparison_compute(kept.key) is True  # the worker (or the next warm-up) completes it
    response = organizer_client.get(url, query).content.decode()
    assert 'id="completing"' not in response and 'id="computed"' in response
    assert_pages_equal(_kept_page(kept.key)[0], page_compute(query))


def test_the_truth_page_is_kept_until_a_source_changes(db, organizer_client, tmp_path):
    from django.core.cache import cache
    from django.core.management import call_command
    from django.urls import reverse

    from metaeval.models import ImportedScore
    from tests.metaeval.truth_data import kiddie_leaderboards_import

    cache.clear()
    judged = kiddie_leaderboards_import(tmp_path)
    url = reverse("metaeval:truth")
    query = {"a": "scores:judged", "truth": "scores:kiddie-truth", "on_missing": "zero", "top_k": "3"}
    # run4 counts 0: tau (4 - 2) / 6 (tests/metaeval/test_truth_command.py works it by hand).
    assert "0.6667" in organizer_client.get(url, query).content.decode()
    with CaptureQueriesContext(connection) as queries:
        assert "0.6667" in organizer_client.get(url, query).content.decode()
    table = ImportedScore._meta.db_table
    reads = [q["sql"] for q in queries.captured_queries if f'FROM "{table}"' in q["sql"]]
    assert reads and all("COUNT(" in sql for sql in reads)  # its fingerprint only: no score read again
    # run1's mean 0.9: judged 0.9, 0.8, 0.4 and run4's 0 order the runs as the truth does (0.864, 0.692, 0.316, 0.088).
    judged.write_text(judged.read_text().replace("run1\tall\tJUDGE\t0.6", "run1\tall\tJUDGE\t0.9"))
    call_command("import_scores", str(judged), "--name", "judged", "--format", "ir_measures", "--replace")
    page = organizer_client.get(url, query).content.decode()
    assert "0.6667" not in page.split('id="truth-runs"')[1].split("</table>")[0]
    assert "1.0000" in page.split('id="truth-runs"')[1].split("</table>")[0]


def test_cells_kept_uncompressed_are_still_updated_by_their_cells_and_kept_compressed(db, monkeypatch):
    """Cells are kept zlib-compressed; those kept before, a bare pickle, are read as they are, not computed again."""
    rng = random.Random(11)
    data = build_random(rng)
    query = {"a": A, "b": B, "metric": "Vstrict", "bootstrap": "0"}
    page_shown(query, here=True)
    key = kept_query(query).key
    row = KeptComparison.objects.get(key=key)
    bare = zlib.decompress(bytes(row.cells))  # fails unless kept compressed
    assert len(bare) > len(bytes(row.cells))
    KeptComparison.objects.filter(key=key).update(cells=bare)  # as kept before the cells were compressed
    full_computations = []
    real = comparison_page._page_computed
    monkeypatch.setattr(comparison_page, "_page_computed", lambda params: full_computations.append(1) or real(params))
    random_change(rng, data)
    assert comparison_compute(key) is True
    assert not full_computations
    assert_pages_equal(_kept_page(key)[0], real(query)[0])
    zlib.decompress(bytes(KeptComparison.objects.get(key=key).cells))  # kept compressed again
