"""Timing page requests for the benchmark commands: server time, CPU time and queries.

The benchmarks of the assessors' pages (bench_workspace, bench_judging) time
each request at two sizes and print whether the query count grows with them.
"""

import statistics
import time
from collections.abc import Callable
from typing import NamedTuple

from django.core.management.base import OutputWrapper
from django.db import connection
from django.test.utils import CaptureQueriesContext

TARGET_MS = 50.0


class Timing(NamedTuple):
    median_ms: float
    p95_ms: float
    cpu_ms: float
    queries: int


def response_ok(response) -> None:
    assert response.status_code == 200, response.status_code


def requests_time(requests: dict[str, Callable[[], None]], *, repeat: int) -> dict[str, Timing]:
    results = {}
    for name, request in requests.items():
        request()  # warm caches: templates, the session
        with CaptureQueriesContext(connection) as queries:
            request()
        # Counted now: later requests reset the connection's query log.
        query_count = len(queries)
        times, cpu_times = [], []
        for _ in range(repeat):
            start, cpu_start = time.perf_counter(), time.process_time()
            request()
            times.append((time.perf_counter() - start) * 1000)
            cpu_times.append((time.process_time() - cpu_start) * 1000)
        times.sort()
        p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
        results[name] = Timing(statistics.median(times), p95, statistics.median(cpu_times), query_count)
    return results


def timings_write(out: OutputWrapper, large: dict[str, Timing], small: dict[str, Timing], *, small_label: str) -> None:
    """The table of the large case, with the small case's query counts beside, and the verdict on them."""
    # CPU time is what this process spent: on a busy machine the wall clock also counts waiting for a core.
    width = max(len("request"), *(len(name) for name in large)) + 4
    small_width = len(small_label) + 3
    out.write(
        f"{'request':<{width}}{'median ms':>10}{'p95 ms':>9}{'cpu ms':>8}{'queries':>9}{small_label:>{small_width}}"
    )
    for name, timing in large.items():
        flag = "" if timing.median_ms < TARGET_MS else "  over target"
        out.write(
            f"{name:<{width}}{timing.median_ms:>10.1f}{timing.p95_ms:>9.1f}{timing.cpu_ms:>8.1f}"
            f"{timing.queries:>9}{small[name].queries:>{small_width}}{flag}"
        )
    same = all(large[name].queries == small[name].queries for name in large)
    out.write("query count independent of the topic's size: " + ("yes" if same else "NO"))
