"""What a job's live path costs in CPU, measured in one process: `bench_llm --cpu-only`.

The items of one job are worked one after the other in this process (no broker, no worker, no thread) against a
test server that answers at once, so that the process's CPU time is the job engine's own per answer, its `openai`
client's requests included, and repeats from one run to the next within a few per cent even on a busy machine
(wall-clock figures do not). Also counted: the statements sent to the database per answer, and the job's end (what
follows the last item: its labels made to count in the kept scores, the planner's statistics) on its own.
"""

import cProfile
import io
import pstats
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connections

from assessor.jobs import engine
from assessor.jobs.llm.client import LLMConfig, _openai_client


@dataclass
class CpuFigures:
    items: int
    cpu: float  # seconds of this process's CPU over the items, the job's end left out
    wall: float
    statements: int  # sent over the items, the job's end left out
    end_cpu: float  # the job's end: CPU and wall seconds, statements
    end_wall: float
    end_statements: int
    profile: str  # the heaviest functions of the items, when profiled
    end_profile: str  # and of the job's end
    client_cpu: float  # seconds of the items' CPU spent in the `openai` client's requests, as they ran here
    requests: int


class _Counter:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute: Callable, sql: str, params, many: bool, context: dict):
        self.count += 1
        return execute(sql, params, many, context)


class _ClientTimed:
    """The thread CPU spent in a client's requests: where they run, beside the app's own work (a client measured
    alone, in a loop of its own, costs less a request than amid the app's)."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.requests = 0

    @contextmanager
    def on(self, client) -> Iterator[None]:
        post = client.post

        def timed(*args, **kwargs):
            started = time.thread_time()
            try:
                return post(*args, **kwargs)
            finally:
                self.cpu += time.thread_time() - started
                self.requests += 1

        client.post = timed
        try:
            yield
        finally:
            del client.post  # the class's own method again


@contextmanager
def statements_counted() -> Iterator[_Counter]:
    """Count the statements this thread sends on every database connection while the block runs."""
    counter = _Counter()
    with _wrapped([connections[alias] for alias in connections], counter):
        yield counter


@contextmanager
def _wrapped(remaining: list, counter: _Counter) -> Iterator[None]:
    if not remaining:
        yield
        return
    with remaining[0].execute_wrapper(counter), _wrapped(remaining[1:], counter):
        yield


def job_cpu_measure(job_id: int, *, config: LLMConfig, profile: bool = False, top: int = 40) -> CpuFigures:
    """Work every pending item of the job in this process, one at a time; what they and the job's end cost."""
    ids = engine.pending_item_ids(job_id)
    end: dict[str, float] = {"cpu": 0.0, "wall": 0.0}
    end_statements = 0
    complete = engine.job_complete_if_finished

    # CPU time, not wall time: what the process spends, not what it waits for.
    profiler = cProfile.Profile(time.process_time) if profile else None
    end_profiler = cProfile.Profile(time.process_time) if profile else None

    def complete_timed(job: int) -> None:
        if profiler is not None and end_profiler is not None:
            profiler.disable()
            end_profiler.enable()
        cpu, wall = time.process_time(), time.monotonic()
        with statements_counted() as counted:
            complete(job)
        end["cpu"] += time.process_time() - cpu
        if profiler is not None and end_profiler is not None:
            end_profiler.disable()
            profiler.enable()
        end["wall"] += time.monotonic() - wall
        nonlocal end_statements
        end_statements += counted.count

    engine.job_complete_if_finished = complete_timed  # type: ignore[assignment]  # the item that ends the job calls it
    client = _ClientTimed()
    try:
        with client.on(_openai_client(config)), statements_counted() as counted:
            cpu, wall = time.process_time(), time.monotonic()
            if profiler is not None:
                profiler.enable()
            for item_id in ids:
                engine.item_process(item_id, config=config)
            if profiler is not None:
                profiler.disable()
            cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    finally:
        engine.job_complete_if_finished = complete
    end_top = top if end["wall"] else 0
    return CpuFigures(
        items=len(ids),
        cpu=cpu - end["cpu"],
        wall=wall - end["wall"],
        statements=counted.count - end_statements,
        end_cpu=end["cpu"],
        end_wall=end["wall"],
        end_statements=end_statements,
        profile=_heaviest(profiler, top),
        end_profile=_heaviest(end_profiler, end_top),
        client_cpu=client.cpu,
        requests=client.requests,
    )


def _heaviest(profiler: cProfile.Profile | None, top: int) -> str:
    """A profile's `top` heaviest functions, by cumulative then by own time ("" when none was taken)."""
    if profiler is None or not top:
        return ""
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    out.write("\n")
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()
