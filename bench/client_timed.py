"""The Celery app of `bench_llm`'s workers: the project's, with the `openai` client's requests timed where they run.

`bench_llm` reports the workers' CPU an answer outside the client two ways: less what the client costs alone (a loop
of requests to a server with no latency, measured first), and less what its requests cost in the worker, summed here
from each thread's CPU time inside the client's POST. The two differ: in a worker the requests wait on the server and
share the interpreter with the other threads, and cost more each than in a loop of their own. Each worker writes its
total, as JSON, to a file named by its process id in the folder `BENCH_CLIENT_CPU_DIR` names, when it stops.
"""

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from celery.signals import worker_init, worker_shutdown

from assessor.project.celery import app

__all__ = ["app"]

_lock = threading.Lock()
_spent: dict[str, float] = {"cpu": 0.0, "requests": 0}


@worker_init.connect
def _client_timed(**_kwargs: Any) -> None:
    import openai

    post = openai.OpenAI.post

    def timed(self, *args, **kwargs):
        started = time.thread_time()
        try:
            return post(self, *args, **kwargs)
        finally:
            spent = time.thread_time() - started
            with _lock:
                _spent["cpu"] += spent
                _spent["requests"] += 1

    openai.OpenAI.post = timed  # type: ignore[method-assign]


@worker_shutdown.connect
def _client_reported(**_kwargs: Any) -> None:
    folder = os.environ.get("BENCH_CLIENT_CPU_DIR")
    if folder:
        with _lock:
            (Path(folder) / f"{os.getpid()}.json").write_text(json.dumps(_spent))
