"""What the job-launch tests share: a small AutoAssign setup, and launches raced for real (threads that all pass a
job's name check before any of them makes its job)."""

import threading
from collections.abc import Callable
from types import ModuleType

from django.db import connections

from assessor.jobs import engine
from assessor.jobs.engine import JobRequestInvalid
from tests.builders import make_answer, make_nugget_set, make_run, make_topic

NUGGETS = ["Paris is the capital", "The Seine crosses it"]


def make_assign_setup(*, texts: list[str] = NUGGETS, answers: int = 2) -> None:
    """The nugget set "manual" of `texts` on one topic, and `answers` answers to it, each its own text."""
    topic = make_topic("t1", query="capital of France")
    make_nugget_set(topic, texts=texts, kind="manual", name="manual")
    for index in range(answers):
        make_answer(make_run(f"run{index}"), topic, [(f"Paris is the capital of France ({index}).", [])])


def launched_at_once(monkeypatch, app: ModuleType, launch: Callable[[], object], count: int) -> list[str]:
    """Run `launch` from `count` threads that all pass the name check (as `app` calls it) before any of them goes
    on to make its job; each outcome is "made" or the refusal's message."""
    passed = threading.Barrier(count, timeout=30)
    checked = engine.output_name_check

    def check_then_wait(**kwargs) -> None:
        checked(**kwargs)
        passed.wait()

    monkeypatch.setattr(app, "output_name_check", check_then_wait)
    outcomes = [""] * count

    def one(index: int) -> None:
        try:
            launch()
            outcomes[index] = "made"
        except JobRequestInvalid as refused:
            outcomes[index] = str(refused)
        except Exception as exc:  # the failure under test: anything else is a 500 for the organizer
            outcomes[index] = f"{type(exc).__name__}: {exc}"
        finally:
            connections.close_all()

    threads = [threading.Thread(target=one, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes
