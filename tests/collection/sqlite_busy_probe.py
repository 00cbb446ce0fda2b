"""A long import and assessors' label saves at once, on a file SQLite database, in threads.

Run by test_sqlite_busy.py in a process of its own, since the test database of
the suite is in memory (where SQLite locks differently). Prints what happened
as JSON: the import's time and outcome, the status codes and times of every
save, and how long the import held the write lock (watched from a connection
of its own, see bench.lock_watch).

The saves start either at once, while the import reads and checks its file
(`early`), or when the import is first seen holding the write lock (`at_lock`).
"""

import json
import sqlite3
import sys
import threading
import time

import django

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import reverse  # noqa: E402

from assignment.models import AssignmentLabel  # noqa: E402
from bench.lock_watch import WriteLockWatch  # noqa: E402
from tests.scenarios import give_assign, make_scenario  # noqa: E402

RETRY_PAUSE = 0.2


def database_path() -> str:
    from django.conf import settings

    return str(settings.DATABASES["default"]["NAME"])


def write_lock_wait(importer: threading.Thread, *, held_for: float = 0.0) -> bool:
    """Wait until the import is seen holding SQLite's write lock (it reads and checks its file first,
    and takes the lock for its switch only), so that the saves meet it."""
    path = database_path()
    locked_since = None
    while importer.is_alive():
        probe = sqlite3.connect(path, timeout=0)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.rollback()
            locked_since = None
        except sqlite3.OperationalError:
            locked_since = locked_since or time.monotonic()
            if time.monotonic() - locked_since >= held_for:
                return True
        finally:
            probe.close()
        time.sleep(0.005)
    return False


def main(topics_path: str, savers: int, mode: str) -> dict:
    call_command("migrate", verbosity=0)
    scenario = make_scenario(plant_llm=False)
    work = give_assign(scenario)
    pairs = [(number, nugget.pk) for number in (1, 2, 3) for nugget in scenario.nuggets][:savers]
    report: dict = {"saves": [], "import": {}}
    started = threading.Event()

    def long_import() -> None:
        begin = time.monotonic()
        started.set()
        try:
            with WriteLockWatch(database_path()) as watch:
                call_command("import_topics", topics_path, stdout=open("/dev/null", "w"))
            end = time.monotonic()
            report["import"] = {"ok": True, "seconds": end - begin, "start": begin, "end": end}
            report["lock"] = {"longest_hold": watch.longest_hold, "held_seconds": watch.held_seconds}
        except Exception as exc:  # reported, so that the test shows it
            report["import"] = {"ok": False, "error": repr(exc), "seconds": time.monotonic() - begin}
        finally:
            connection.close()

    def save(client: Client, number: int, nugget: int) -> None:
        url = reverse("judge:label", args=[work.pk, number])
        statuses = []
        begin = time.monotonic()
        try:
            # As the judging page does: send again what the server could not take yet.
            while len(statuses) < 100:
                response = client.post(url, {"nugget": nugget, "label": "support", "previous": "", "version": 0})
                statuses.append(response.status_code)
                if response.status_code != 503:
                    break
                statuses[-1] = f"503 Retry-After {response.get('Retry-After')}"
                time.sleep(RETRY_PAUSE)
        finally:
            end = time.monotonic()
            report["saves"].append({"statuses": statuses, "seconds": end - begin, "start": begin, "end": end})
            connection.close()

    clients = []
    for _ in pairs:
        # Logged in before the import starts: a login writes its session.
        client = Client(raise_request_exception=False)
        client.force_login(scenario.assessor)
        clients.append(client)
    # The first request loads the URLconf, views and templates: done now, or the saves, starved of the
    # interpreter by the import's parsing, would only start once the import is over.
    clients[0].get(reverse("judge:answer", args=[work.pk, 1]))
    importer = threading.Thread(target=long_import)
    importer.start()
    started.wait()
    report["lock_seen"] = write_lock_wait(importer) if mode == "at_lock" else None
    threads = [threading.Thread(target=save, args=(client, *pair)) for client, pair in zip(clients, pairs, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads + [importer]:
        thread.join()
    report["labels"] = AssignmentLabel.objects.filter(assigner="manual").count()
    report["expected_labels"] = len(pairs)
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]), sys.argv[3])))
