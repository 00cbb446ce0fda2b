"""Server time and query count of the nugget workspace, on a throw-away topic.

    manage.py bench_workspace [--nuggets 30] [--segments 100] [--repeat 30]

Builds a post-editing topic with that many drafts and NIST-relevant
segments inside a transaction that is rolled back at the end (nothing stays
in the database), then times the requests an assessor makes: the page, the
panel an edit returns, an edit of a nugget's text, an importance, a move
and a heartbeat. The same requests on a small topic show that the number of
queries does not depend on the topic's size.
"""

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.test import Client
from django.urls import reverse

from assessor.collection import kinds as collection_kinds
from assessor.models import AssessorWork, ImportBatch, LabelSource, Qrel, QrelSource, Segment, Topic
from assessor.sources import source_claim
from assessor.work.roles import Role, roles_ensure, user_set_role
from bench.request_bench import (
    TARGET_MS,
    Timing,
    requests_time,
    response_ok,
    timings_write,
)
from bench.tidy import database_tidied
from nuggets import kinds as nugget_kinds
from nuggets.giving import nugget_work_give
from nuggets.models import Nugget, NuggetSet

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
        self.stdout.write(database_tidied())
        with transaction.atomic():
            roles_ensure()
            large = self.measure(nuggets=options["nuggets"], segments=options["segments"], repeat=repeat, tag="large")
            small = self.measure(nuggets=5, segments=10, repeat=max(3, repeat // 5), tag="small")
            transaction.set_rollback(True)
        self.stdout.write(
            f"nugget workspace, {options['nuggets']} nuggets and {options['segments']} segments "
            f"({connection.vendor}, {repeat} runs each; target < {TARGET_MS:.0f} ms):"
        )
        timings_write(self.stdout, large, small, small_label="queries (5 nuggets, 10 segments)")

    def measure(self, *, nuggets: int, segments: int, repeat: int, tag: str) -> dict[str, Timing]:
        client, work, ids = self.scenario(nuggets=nuggets, segments=segments, tag=tag)
        self.stdout.write(f"{tag} topic built; " + database_tidied())
        page_url = reverse("nuggets:work", args=[work.pk])
        op_url = reverse("nuggets:op", args=[work.pk, "edit"]).removesuffix("edit/")
        heartbeat_url = reverse("nuggets:heartbeat", args=[work.pk])
        nugget_set = NuggetSet.objects.get(topic_id=work.topic_id, name=work.nugget_set_name)
        script: dict[str, Any] = {"HTTP_ACCEPT": "application/json"}
        state = {"version": nugget_set.version, "turn": 0}

        def post(operation: str, **data) -> Callable[[], None]:
            def send() -> None:
                state["turn"] += 1
                fields = {key: (value(state["turn"]) if callable(value) else value) for key, value in data.items()}
                response = client.post(op_url + operation + "/", {**fields, "version": state["version"]}, **script)
                assert response.status_code == 200, response.content[:300]
                state["version"] += 1

            return send

        requests: dict[str, Callable[[], None]] = {
            "workspace page": lambda: response_ok(client.get(page_url)),
            "panel (script)": lambda: response_ok(client.get(page_url, **script)),
            "edit text": post("edit", nugget=ids[0], text=lambda turn: f"a reworded nugget, take {turn}"),
            "set importance": post(
                "importance", nugget=ids[1], importance=lambda turn: "vital" if turn % 2 else "okay"
            ),
            "move": post("move", nugget=ids[2], to=lambda turn: (turn % 2) * (len(ids) - 1)),
            "heartbeat": lambda: response_ok(client.post(heartbeat_url)),
        }
        return requests_time(requests, repeat=repeat)

    def scenario(self, *, nuggets: int, segments: int, tag: str) -> tuple[Client, AssessorWork, list[int]]:
        organizer = User.objects.create(username=f"bench-organizer-{tag}")
        user_set_role(organizer, Role.ORGANIZER)
        assessor = User.objects.create(username=f"bench-assessor-{tag}")
        user_set_role(assessor, Role.ASSESSOR)
        topic = Topic.objects.create(id=f"bench-{tag}", query="how do assessors post-edit nuggets quickly")
        source, _ = QrelSource.objects.get_or_create(
            name="nist",
            defaults={
                "source": source_claim(family=collection_kinds.QRELS_FAMILY, name="nist", kind=LabelSource.Kind.FILE)
            },
        )
        docs = Segment.objects.bulk_create(
            Segment(docid=f"msmarco_v2.1_doc_bench_{tag}#{i}_0", text=SEGMENT_TEXT) for i in range(segments)
        )
        Qrel.objects.bulk_create(
            Qrel(source=source, topic=topic, segment=doc, grade=1 + i % 3) for i, doc in enumerate(docs)
        )
        batch = ImportBatch.objects.create(kind=nugget_kinds.IMPORT_NUGGETS, file_name="bench.jsonl", sha256="0" * 64)
        drafts = NuggetSet.objects.create(
            topic=topic,
            kind=NuggetSet.Kind.DRAFT,
            name="draft",
            source=source_claim(
                family=nugget_kinds.LABEL_FAMILY, name="draft", kind=LabelSource.Kind.FILE, batch=batch
            ),
            imported_from=batch,
        )
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
