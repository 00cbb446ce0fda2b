"""A worker's threads compute kept comparisons one at a time: each holds two sources' scores at once."""

import threading
import time

from metaeval import comparison_page


def test_comparisons_asked_for_at_once_are_computed_one_after_the_other(monkeypatch):
    running: list[str] = []
    most_at_once = []

    def computed(key: str) -> bool:
        running.append(key)
        most_at_once.append(len(running))
        time.sleep(0.05)  # long enough for the other threads to arrive while it runs
        running.remove(key)
        return True

    monkeypatch.setattr(comparison_page, "_comparison_compute", computed)
    threads = [threading.Thread(target=comparison_page.comparison_compute, args=[f"key-{n}"]) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most_at_once == [1, 1, 1]


def test_a_computation_that_fails_lets_the_next_one_run(monkeypatch):
    calls = []

    def failing(key: str) -> bool:
        calls.append(key)
        raise RuntimeError("the database went away")

    monkeypatch.setattr(comparison_page, "_comparison_compute", failing)
    for key in ("first", "second"):
        try:
            comparison_page.comparison_compute(key)
        except RuntimeError:
            pass
    assert calls == ["first", "second"]
