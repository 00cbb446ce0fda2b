"""Server time and query count of the judging pages and label saves, on a throw-away topic.

    manage.py bench_judging [--answers 50] [--sentences 20] [--nuggets 20] [--repeat 30]

Builds a topic with that many answers of that many sentences (each citing a
segment of about a hundred words), the assessor's nugget list and an LLM's
support labels, inside a transaction that is rolled back at the end (nothing
stays in the database). Then times what an assessor asks for: a ManualAssign
answer page and a label save, a support page in both conditions and a
support label save, and the organizer's two progress pages. The same
requests on a small topic show whether the number of queries depends on the
topic's size.

The label saves are posted as the page's script posts them (a urlencoded form,
an operation id, asking for JSON) twice: through the test client, and straight
to the WSGI application as gunicorn calls it (the session cookie, the CSRF
cookie and header, every middleware), without the test client's own work. The
second is the cost of a save in the web process; "cpu ms" is this process's
CPU time (the median), which the machine's load barely changes, unlike the
wall clock.
"""

import io
import uuid
from collections.abc import Callable
from urllib.parse import urlencode

from django.contrib.auth.models import User
from django.core.handlers.wsgi import WSGIHandler
from django.core.management.base import BaseCommand
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection, transaction
from django.middleware.csrf import get_token
from django.test import Client, RequestFactory
from django.urls import reverse

from assessor.models import (
    Answer,
    Citation,
    ImportBatch,
    LabelSource,
    Run,
    Segment,
    Sentence,
    Topic,
)
from assessor.sources import source_claim
from assessor.work.roles import Role, roles_ensure, user_set_role
from assignment.judging import assign_work_give
from bench.request_bench import (
    TARGET_MS,
    Timing,
    requests_time,
    response_ok,
    timings_write,
)
from bench.tidy import database_tidied
from nuggets import kinds as nugget_kinds
from nuggets.models import Nugget, NuggetSet
from support import kinds as support_kinds
from support.models import SupportLabel
from support.services import support_work_give

SEGMENT_TEXT = (
    "A passage of about a hundred words from the MS MARCO V2.1 segment collection, the kind an assessor reads "
    "beside the sentence that cites it while deciding whether it supports all, some or none of the sentence. "
) * 3
SENTENCE_TEXT = "An answer sentence of about twenty words that states a fact and cites one of the retrieved passages"
SCRIPT = {"HTTP_ACCEPT": "application/json"}  # as the judging page's script asks
FORM = "application/x-www-form-urlencoded"  # as the script posts (URLSearchParams)


class ServedPost:
    """POSTs straight to the WSGI application, with a logged-in client's session and a CSRF token, as
    gunicorn hands a request to it: what the web process spends on a save, without the test client."""

    def __init__(self, client: Client):
        self.handler = WSGIHandler()
        self.csrf = get_token(RequestFactory().get("/"))
        self.cookie = f"sessionid={client.cookies['sessionid'].value}; csrftoken={self.csrf}"

    def __call__(self, path: str, fields: dict) -> tuple[int, bytes]:
        body = urlencode(fields).encode()
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1",
            "HTTP_COOKIE": self.cookie,
            "HTTP_ACCEPT": "application/json",
            "HTTP_X_CSRFTOKEN": self.csrf,
            "CONTENT_TYPE": FORM,
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body),
            "wsgi.url_scheme": "http",
            "wsgi.errors": io.StringIO(),
            "wsgi.version": (1, 0),
            "wsgi.multithread": False,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        status: list[str] = []

        def start_response(code: str, headers: list[tuple[str, str]], *rest: object) -> Callable[[bytes], object]:
            status.append(code)
            return lambda data: None

        # As the test client does: the benchmark's transaction must outlive the request's end.
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            response = self.handler(environ, start_response)
            content = b"".join(response)
            response.close()
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)
        return int(status[0].split()[0]), content


class Command(BaseCommand):
    help = "Time the judging pages and label saves (ManualAssign, support) and count their queries."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--answers", type=int, default=50)
        parser.add_argument("--sentences", type=int, default=20)
        parser.add_argument("--nuggets", type=int, default=20)
        parser.add_argument("--repeat", type=int, default=30)

    def handle(self, *args, **options) -> None:
        repeat = max(1, options["repeat"])
        size = (options["answers"], options["sentences"], options["nuggets"])
        self.stdout.write(database_tidied())
        with transaction.atomic():
            roles_ensure()
            large = self.measure(*size, repeat=repeat, tag="large")
            small = self.measure(5, 4, 5, repeat=max(3, repeat // 5), tag="small")
            transaction.set_rollback(True)
        self.stdout.write(
            f"judging, {size[0]} answers of {size[1]} sentences, {size[2]} nuggets "
            f"({connection.vendor}, {repeat} runs each; target < {TARGET_MS:.0f} ms):"
        )
        timings_write(self.stdout, large, small, small_label="queries (5 answers of 4, 5 nuggets)")

    def measure(self, answers: int, sentences: int, nuggets: int, *, repeat: int, tag: str) -> dict[str, Timing]:
        assessor_client, organizer_client, works, nugget_id = self.scenario(
            answers=answers, sentences=sentences, nuggets=nuggets, tag=tag
        )
        self.stdout.write(f"{tag} topic built; " + database_tidied())
        assign, scratch, postedit = works
        state = {"assign": "", "support": ""}
        served = ServedPost(assessor_client)

        def client_post(path: str, fields: dict) -> tuple[int, bytes]:
            response = assessor_client.post(path, urlencode(fields), content_type=FORM, **SCRIPT)
            return response.status_code, response.content

        def assign_save(post: Callable[[str, dict], tuple[int, bytes]]) -> None:
            label = "support" if state["assign"] != "support" else "not_support"
            status, content = post(
                reverse("judge:label", args=[assign.pk, 1]),
                {
                    "nugget": nugget_id,
                    "label": label,
                    "previous": state["assign"],
                    "version": assign.version,
                    "op_id": str(uuid.uuid4()),  # as the page's script sends
                },
            )
            assert status == 200, content[:300]
            state["assign"] = label

        def support_save(post: Callable[[str, dict], tuple[int, bytes]]) -> None:
            label = "2" if state["support"] != "2" else "0"
            status, content = post(
                reverse("support:label", args=[scratch.pk, 1]),
                {
                    "sentence": 0,
                    "label": label,
                    "previous": state["support"],
                    "version": scratch.version,
                    "op_id": str(uuid.uuid4()),
                },
            )
            assert status == 200, content[:300]
            state["support"] = label

        requests: dict[str, Callable[[], None]] = {
            "assign page": lambda: response_ok(assessor_client.get(reverse("judge:answer", args=[assign.pk, 1]))),
            "assign label save": lambda: assign_save(client_post),
            "assign label save (WSGI)": lambda: assign_save(served),
            "support page (scratch)": lambda: response_ok(
                assessor_client.get(reverse("support:answer", args=[scratch.pk, 1]))
            ),
            "support page (postedit)": lambda: response_ok(
                assessor_client.get(reverse("support:answer", args=[postedit.pk, 1]))
            ),
            "support label save": lambda: support_save(client_post),
            "support label save (WSGI)": lambda: support_save(served),
            "organizer: assign": lambda: response_ok(organizer_client.get(reverse("judge:organize"))),
            "organizer: support": lambda: response_ok(organizer_client.get(reverse("support:organize"))),
        }
        return requests_time(requests, repeat=repeat)

    def scenario(self, *, answers: int, sentences: int, nuggets: int, tag: str):
        organizer = User.objects.create(username=f"bench-judge-organizer-{tag}")
        user_set_role(organizer, Role.ORGANIZER)
        assessor = User.objects.create(username=f"bench-judge-assessor-{tag}")
        user_set_role(assessor, Role.ASSESSOR)
        topic = Topic.objects.create(id=f"bench-judge-{tag}", query="how do assessors judge answers quickly")
        segments = Segment.objects.bulk_create(
            Segment(docid=f"msmarco_v2.1_doc_judge_{tag}#{i}_0", text=SEGMENT_TEXT) for i in range(sentences)
        )
        runs = Run.objects.bulk_create(Run(run_id=f"bench-judge-{tag}-run-{i}") for i in range(answers))
        text = " ".join([SENTENCE_TEXT] * sentences)
        answer_rows = Answer.objects.bulk_create(
            Answer(run=run, topic=topic, text=text, words=len(text.split())) for run in runs
        )
        sentence_rows = Sentence.objects.bulk_create(
            Sentence(answer=answer, index=i, text=f"{SENTENCE_TEXT} ({i})")
            for answer in answer_rows
            for i in range(sentences)
        )
        citations = Citation.objects.bulk_create(
            Citation(sentence=sentence, position=0, segment=segments[sentence.index]) for sentence in sentence_rows
        )
        batch = ImportBatch.objects.create(kind=support_kinds.IMPORT_SUPPORT, file_name="bench.jsonl", sha256="0" * 64)
        llm_source = source_claim(
            family=support_kinds.LABEL_FAMILY, name="bench-llm", kind=LabelSource.Kind.FILE, batch=batch
        )
        SupportLabel.objects.bulk_create(
            SupportLabel(
                citation=c, method="bench-llm", method_kind="auto", label=i % 3, source=llm_source, imported_from=batch
            )
            for i, c in enumerate(citations)
        )
        nugget_set = NuggetSet.objects.create(
            topic=topic,
            kind=NuggetSet.Kind.MANUAL,
            name="manual",
            source=source_claim(family=nugget_kinds.LABEL_FAMILY, name="manual", kind=LabelSource.Kind.PERSON),
            created_by=assessor,
        )
        nugget_rows = Nugget.objects.bulk_create(
            Nugget(
                nugget_set=nugget_set,
                position=i,
                text=f"nugget {i} of about ten words here",
                importance="vital",
                created_by=assessor,
            )
            for i in range(nuggets)
        )
        works = (
            assign_work_give(topic=topic, assessor=assessor, by=organizer),
            support_work_give(topic=topic, assessor=assessor, kind=support_kinds.SUPPORT_SCRATCH, by=organizer),
            support_work_give(topic=topic, assessor=assessor, kind=support_kinds.SUPPORT_POSTEDIT, by=organizer),
        )
        assessor_client, organizer_client = Client(), Client()
        assessor_client.force_login(assessor)
        organizer_client.force_login(organizer)
        return assessor_client, organizer_client, works, nugget_rows[0].pk
