"""Server time and query count of the nugget workspace, on a throw-away topic.

    manage.py bench_workspace [--nuggets 30] [--segments 100] [--repeat 30]

Builds a post-editing topic with that many drafts and NIST-relevant
segments inside a transaction that is rolled back at the end (nothing stays
in the database), then times the requests an assessor makes: the page, the
panel an edit returns, an edit of a nugget's text, an importance, a move
and a heartbeat. The same requests on a small topic show that the number of
queries does not depend on the topic's size.
"""

import statistics
import time
from collections.abc import Callable

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessor.models import ImportBatch, Qrel, QrelSource, Segment, Topic
from assessor.roles import Role, roles_ensure, user_set_role
from nuggets.models import Nugget, NuggetSet
from nuggets.services import nugget_work_give

TARGET_MS = 50.0
SEGMENT_TEXT = (
    "A passage of about a hundred words from the MS MARCO V2.1 segment collection, the kind an assessor reads "
    "beside the nugget list while deciding which facts a good answer must contain. "
) * 3


class Command(BaseCommand):
    help = "Time the nugget workspace's requests (page, edit, heartbeat) and count their queries."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--nuggets", type=int, default=30)
        parser.add_argument("--segments", type=int, default=100)
        parser.add_argument("--repeat", type=int, default=30)

    def handle(self, *args, **options) -> None:
        repeat = max(1, options["repeat"])
        with transaction.atomic():
            roles_ensure()
            large = self.measure(nuggets=options["nuggets"], segments=options["segments"], repeat=repeat, tag="large")
            small = self.measure(nuggets=5, segments=10, repeat=max(3, repeat // 5), tag="small")
            transaction.set_rollback(True)
        self.stdout.write(
            f"nugget workspace, {options['nuggets']} nuggets and {options['segments']} segments "
            f"({connection.vendor}, {repeat} runs each; target < {TARGET_MS:.0f} ms):"
        )
        # CPU time is what this process spent: on a busy machine the wall clock also counts waiting for a core.
        self.stdout.write(
            f"{'request':<22}{'median ms':>10}{'p95 ms':>9}{'cpu ms':>8}{'queries':>9}"
            f"{'queries (5 nuggets, 10 segments)':>35}"
        )
        for name, (median, p95, cpu, queries) in large.items():
            flag = "" if median < TARGET_MS else "  over target"
            self.stdout.write(f"{name:<22}{median:>10.1f}{p95:>9.1f}{cpu:>8.1f}{queries:>9}{small[name][3]:>35}{flag}")
        same = all(large[name][3] == small[name][3] for name in large)
        self.stdout.write("query count independent of the topic's size: " + ("yes" if same else "NO"))

    def measure(
        self, *, nuggets: int, segments: int, repeat: int, tag: str
    ) -> dict[str, tuple[float, float, float, int]]:
        client, work, ids = self.scenario(nuggets=nuggets, segments=segments, tag=tag)
        page_url = reverse("nuggets:work", args=[work.pk])
        op_url = reverse("nuggets:op", args=[work.pk, "edit"]).removesuffix("edit/")
        heartbeat_url = reverse("nuggets:heartbeat", args=[work.pk])
        nugget_set = NuggetSet.objects.get(topic_id=work.topic_id, name=work.nugget_set_name)
        htmx = {"HTTP_HX_REQUEST": "true"}
        state = {"version": nugget_set.version, "turn": 0}

        def post(operation: str, **data) -> Callable[[], None]:
            def send() -> None:
                state["turn"] += 1
                fields = {key: (value(state["turn"]) if callable(value) else value) for key, value in data.items()}
                response = client.post(op_url + operation + "/", {**fields, "version": state["version"]}, **htmx)
                assert response.status_code == 200, response.content[:300]
                state["version"] += 1

            return send

        requests: dict[str, Callable[[], None]] = {
            "workspace page": lambda: self.ok(client.get(page_url)),
            "panel (htmx)": lambda: self.ok(client.get(page_url, **htmx)),
            "edit text": post("edit", nugget=ids[0], text=lambda turn: f"a reworded nugget, take {turn}"),
            "set importance": post(
                "importance", nugget=ids[1], importance=lambda turn: "vital" if turn % 2 else "okay"
            ),
            "move": post("move", nugget=ids[2], to=lambda turn: (turn % 2) * (len(ids) - 1)),
            "heartbeat": lambda: self.ok(client.post(heartbeat_url)),
        }
        results = {}
        for name, request in requests.items():
            request()  # warm caches: templates, the session
            with CaptureQueriesContext(connection) as queries:
                request()
            # Counted now: later requests reset the connection's query log.
            query_count = len(queries)
            times = []
            cpu_times = []
            for _ in range(repeat):
                start, cpu_start = time.perf_counter(), time.process_time()
                request()
                times.append((time.perf_counter() - start) * 1000)
                cpu_times.append((time.process_time() - cpu_start) * 1000)
            times.sort()
            p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
            results[name] = (statistics.median(times), p95, statistics.median(cpu_times), query_count)
        return results

    @staticmethod
    def ok(response) -> None:
        assert response.status_code == 200, response.status_code

    def scenario(self, *, nuggets: int, segments: int, tag: str) -> tuple[Client, object, list[int]]:
        organizer = User.objects.create(username=f"bench-organizer-{tag}")
        user_set_role(organizer, Role.ORGANIZER)
        assessor = User.objects.create(username=f"bench-assessor-{tag}")
        user_set_role(assessor, Role.ASSESSOR)
        topic = Topic.objects.create(id=f"bench-{tag}", query="how do assessors post-edit nuggets quickly")
        source, _ = QrelSource.objects.get_or_create(name="nist")
        docs = Segment.objects.bulk_create(
            Segment(docid=f"msmarco_v2.1_doc_bench_{tag}#{i}_0", text=SEGMENT_TEXT) for i in range(segments)
        )
        Qrel.objects.bulk_create(
            Qrel(source=source, topic=topic, segment=doc, grade=1 + i % 3) for i, doc in enumerate(docs)
        )
        batch = ImportBatch.objects.create(kind=ImportBatch.Kind.NUGGETS, file_name="bench.jsonl", sha256="0" * 64)
        drafts = NuggetSet.objects.create(topic=topic, kind=NuggetSet.Kind.DRAFT, name="draft", imported_from=batch)
        Nugget.objects.bulk_create(
            Nugget(
                nugget_set=drafts, position=i, text=f"draft nugget number {i} of about ten words", imported_from=batch
            )
            for i in range(nuggets)
        )
        work = nugget_work_give(topic=topic, assessor=assessor, condition="auto_edit", by=organizer)
        ids = list(
            Nugget.objects.filter(nugget_set__topic=topic, nugget_set__name="auto_edit")
            .order_by("position")
            .values_list("id", flat=True)
        )
        client = Client()
        client.force_login(assessor)
        return client, work, ids
