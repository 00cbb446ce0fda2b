"""Time the official scores on a synthetic condition at TREC 2024 scale.

Not a test (pytest does not collect it): a benchmark that prints numbers.
It fills its own database, so point DATABASE_URL at a throwaway one whose
name contains "bench":

    DATABASE_URL=sqlite:////tmp/bench_scoring.sqlite3 .venv/bin/python tests/bench_scoring.py
    createdb -h 127.0.0.1 -U postgres bench_scoring
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_scoring .venv/bin/python tests/bench_scoring.py

The data is built once (301 topics x 146 runs x 20 nuggets = 879,060
assignment labels; 8 sentences an answer, 7 of them citing, for support)
and reused on the next runs.
"""

import argparse
import os
import random
import sys
import time
from pathlib import Path

from assignment import kinds as assignment_kinds

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assessor.project.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from assessor.models import Answer, Citation, ImportBatch, LabelSource, Run, Segment, Sentence, Topic  # noqa: E402
from assignment.models import AssignmentLabel  # noqa: E402
from nuggets.models import Nugget, NuggetSet  # noqa: E402
from support.models import SupportLabel  # noqa: E402

NUGGETS = "bench"
ASSIGNER = "bench"
METHOD = "bench"
SENTENCES = 8
BULK = 5000


def build(*, topics: int, runs: int, nuggets: int, seed: int) -> None:
    rng = random.Random(seed)
    with transaction.atomic():
        batch = ImportBatch.objects.create(kind=assignment_kinds.IMPORT_ASSIGNMENTS, file_name="bench", sha256="0" * 64)
        topic_ids = [f"2024-{index:05d}" for index in range(topics)]
        Topic.objects.bulk_create(Topic(id=topic_id, query=f"query {topic_id}") for topic_id in topic_ids)
        segments = [Segment(docid=f"msmarco_v2.1_doc_00_{index}#0_0") for index in range(topics * 20)]
        Segment.objects.bulk_create(segments, batch_size=BULK)
        run_objects = Run.objects.bulk_create(Run(run_id=f"team.run_{index:03d}") for index in range(runs))
        answers = Answer.objects.bulk_create(
            (
                Answer(run=run, topic_id=topic_id, text="word " * 200, words=200 + rng.randrange(200))
                for topic_id in topic_ids
                for run in run_objects
            ),
            batch_size=BULK,
        )
        def file_source(family: str, name: str) -> LabelSource:
            return LabelSource.objects.create(family=family, name=name, kind="file", imported_from=batch)

        nugget_source = file_source("nuggets", NUGGETS)
        assigner_source = file_source("assignment", ASSIGNER)
        method_source = file_source("support", METHOD)
        sets = NuggetSet.objects.bulk_create(
            NuggetSet(topic_id=topic_id, kind="auto_edit", name=NUGGETS, source=nugget_source, imported_from=batch)
            for topic_id in topic_ids
        )
        nugget_objects = Nugget.objects.bulk_create(
            (
                Nugget(
                    nugget_set=nugget_set,
                    position=position,
                    text=f"nugget {position}",
                    importance="vital" if rng.random() < 0.4 else "okay",
                    imported_from=batch,
                )
                for nugget_set in sets
                for position in range(nuggets)
            ),
            batch_size=BULK,
        )
        by_topic: dict[str, list[Nugget]] = {}
        for nugget, nugget_set in zip(nugget_objects, (s for s in sets for _ in range(nuggets)), strict=False):
            by_topic.setdefault(nugget_set.topic_id, []).append(nugget)
        labels = ["support", "partial_support", "not_support"]
        AssignmentLabel.objects.bulk_create(
            (
                AssignmentLabel(
                    answer=answer,
                    nugget=nugget,
                    assigner=ASSIGNER,
                    assigner_kind="manual",
                    source=assigner_source,
                    label=rng.choice(labels),
                    imported_from=batch,
                )
                for answer in answers
                for nugget in by_topic[answer.topic_id]
            ),
            batch_size=BULK,
        )
        sentences = Sentence.objects.bulk_create(
            (Sentence(answer=answer, index=index, text="A sentence.") for answer in answers for index in range(SENTENCES)),
            batch_size=BULK,
        )
        citations = Citation.objects.bulk_create(
            (
                Citation(sentence=sentence, position=0, segment=segments[rng.randrange(len(segments))], reference_rank=0)
                for sentence in sentences
                if sentence.index != SENTENCES - 1
            ),
            batch_size=BULK,
        )
        SupportLabel.objects.bulk_create(
            (
                SupportLabel(
                    citation=citation,
                    method=METHOD,
                    method_kind="scratch",
                    source=method_source,
                    label=rng.choice([-1, 0, 1, 1, 2, 2, 2]),
                    imported_from=batch,
                )
                for citation in citations
            ),
            batch_size=BULK,
        )


def timed(label: str, function, repeat: int = 3):
    """Best wall time of a few runs, and the CPU time of this process in that run.

    On a shared machine the wall time depends on the load; the process CPU
    time does not (with SQLite it includes the database's work, with
    PostgreSQL only the client's).
    """
    best = (float("inf"), 0.0)
    result = None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        result = function()
        best = min(best, (time.perf_counter() - start, time.process_time() - cpu))
    print(f"{label:<32} best of {repeat}: {best[0]:6.2f} s wall, {best[1]:6.2f} s CPU")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=301)
    parser.add_argument("--runs", type=int, default=146)
    parser.add_argument("--nuggets", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exports", action="store_true", help="also time the exports")
    args = parser.parse_args()
    name = str(connection.settings_dict["NAME"])
    if "bench" not in name:
        sys.exit(f"refusing to fill database {name!r}: point DATABASE_URL at one whose name contains 'bench'")
    call_command("migrate", verbosity=0)
    if not AssignmentLabel.objects.filter(assigner=ASSIGNER).exists():
        start = time.perf_counter()
        build(topics=args.topics, runs=args.runs, nuggets=args.nuggets, seed=args.seed)
        print(f"built the data in {time.perf_counter() - start:.1f} s")
    print(
        f"{connection.vendor}: {Topic.objects.count()} topics, {Run.objects.count()} runs, "
        f"{AssignmentLabel.objects.count()} assignment labels, {Sentence.objects.count()} sentences, "
        f"{SupportLabel.objects.count()} support labels"
    )

    from assignment.selectors import conditions_list, nugget_scores
    from support.selectors import support_methods_list, support_scores

    scores = timed("nugget_scores (one condition)", lambda: nugget_scores(nuggets=NUGGETS, assigner=ASSIGNER))
    print(f"  {len(scores.per_topic)} answers, {len(scores.topics)} topics, {len(scores.runs)} runs")
    some = timed("nugget_scores (10 runs)", lambda: nugget_scores(nuggets=NUGGETS, assigner=ASSIGNER, runs=scores.runs[:10]))
    print(f"  same means as the whole condition: {all(some.run_means[r] == scores.run_means[r] for r in some.runs)}")
    timed("conditions_list", conditions_list)
    support = timed("support_scores (one method)", lambda: support_scores(method=METHOD))
    print(f"  {len(support.per_topic)} answers")
    timed("support_methods_list", support_methods_list)
    from assignment.selectors import assignment_label_pairs

    pairs = timed("assignment_label_pairs", lambda: assignment_label_pairs(nuggets=NUGGETS, assigner=ASSIGNER), repeat=1)
    print(f"  {len(pairs)} pairs")
    if args.exports:
        from assignment.exporting import assignments_lines, scores_lines
        from support.exporting import support_lines

        timed("scores_lines", lambda: sum(1 for _ in scores_lines(scores)), repeat=1)
        timed("assignments_lines", lambda: sum(1 for _ in assignments_lines(nuggets=NUGGETS, assigner=ASSIGNER)), repeat=1)
        timed("support_lines", lambda: sum(1 for _ in support_lines(method=METHOD)), repeat=1)


if __name__ == "__main__":
    main()
