"""The database as a served one is kept before a benchmark times anything: no dead rows, fresh planner statistics.

A benchmark that builds its data and times at once measures the leftovers as much as the code: on PostgreSQL
without autovacuum (a test server) the dead rows of earlier runs are read past by every scan, and a table
bulk-loaded a moment ago has no statistics, so the planner guesses a row and picks nested loops; on SQLite,
without `ANALYZE` (its `sqlite_stat1`) the planner picks an index by its name's order. bench_argue and
bench_workspace ran 3-8 times slower on a scratch database holding their own earlier runs.

`database_tidied` vacuums and analyzes. VACUUM cannot run inside a transaction on either database, ANALYZE
can: a benchmark that builds inside a transaction it rolls back calls it before the transaction (the earlier
runs' dead rows; both) and again once it has built (the new rows' statistics; ANALYZE alone).

Benchmarks that build under fresh names (`bench-<tag>-...`) in the configured database leave their rows
behind, as their jobs' output must be read by real workers: `bench_leftovers` counts those of earlier runs, so
that their output says what else the database held.
"""

import time

from django.db import DEFAULT_DB_ALIAS, connections

BENCH_PREFIX = "bench-"


def database_tidied(*, using: str = DEFAULT_DB_ALIAS) -> str:
    """VACUUM and ANALYZE the database (ANALYZE alone inside a transaction); the line saying so, with its time."""
    connection = connections[using]
    inside = connection.in_atomic_block
    started = time.perf_counter()
    with connection.cursor() as cursor:
        if inside:
            cursor.execute("ANALYZE")
        elif connection.vendor == "postgresql":
            cursor.execute("VACUUM ANALYZE")
        else:
            cursor.execute("VACUUM")
            cursor.execute("ANALYZE")
    seconds = time.perf_counter() - started
    done = (
        "analyzed (inside the benchmark's transaction, where VACUUM cannot run)" if inside else "vacuumed and analyzed"
    )
    return f"{done} ({connection.vendor}): {seconds:.1f} s"


def bench_leftovers(*, prefix: str = BENCH_PREFIX, using: str = DEFAULT_DB_ALIAS) -> str:
    """What earlier benchmark runs left under `prefix` in the database, as one line to print before building."""
    from assessor.models import Answer, Job, Run, Segment, Topic

    topics = Topic.objects.using(using).filter(id__startswith=prefix)
    counts = {
        "topics": topics.count(),
        "runs": Run.objects.using(using).filter(run_id__startswith=prefix).count(),
        "answers": Answer.objects.using(using).filter(topic__in=topics).count(),
        "segments": Segment.objects.using(using).filter(docid__startswith=prefix).count(),
        "jobs": Job.objects.using(using).filter(output_name__startswith=prefix).count(),
    }
    if not any(counts.values()):
        return f"leftovers of earlier runs ({prefix}*): none"
    listed = ", ".join(f"{count:,} {name}" for name, count in counts.items())
    return (
        f"leftovers of earlier runs ({prefix}*): {listed}; they are vacuumed and analyzed with the rest, but a "
        "scratch database made anew (dropdb/createdb, or a new SQLite file) measures without them"
    )
