"""A label save makes a fixed, hand-counted number of queries, and its lean reads agree with the page's.

The counts are what a save needs, one query each (through the test client,
signed in, inside the test's transaction):

    1  the session row, with its user and    (SessionMiddleware, read when the user is asked for; the
       their groups                          user and the assessor role check, in one)
    2  SAVEPOINT                            (the save's transaction, nested in the test's one)
    3  the work, locked, with its source    (the access check, before any write)
    4  the pair or nugget is the work's     (ManualAssign: the nugget in the submitted list, the
                                              operation id, for a replay, and the topic's answer ids;
                                              support: the answers with pairs, in the order, and the
                                              operation id)
    5  the pair                             (support only: the citation)
    6  the stored label, locked
    7  UPDATE the work's active time
    8  INSERT (or UPDATE) the label
    9  INSERT the operation id
    10 RELEASE SAVEPOINT

ManualAssign makes 9, support 10. A replay stops after the stored label's
read (and releases the savepoint): 6 queries for ManualAssign, 7 for support. A regression
that reads the topic's pairs, the work again, the label source or the user's
groups on its own adds a query and fails here.
"""

import uuid
from urllib.parse import urlencode

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from assessor.models import Answer, AssessorWork, Topic, WorkOperation
from assessor.work.roles import roles_ensure
from assignment.judging import answer_order, id_list, nugget_list_check
from assignment.models import AssignmentLabel
from bench.management.commands.bench_judging import Command
from support.judging import topic_pairs
from support.models import SupportLabel
from support.services import pair_answer_order, pair_citation

pytestmark = pytest.mark.django_db

ASSIGN_SAVE_QUERIES = 9
ASSIGN_REPLAY_QUERIES = 6
SUPPORT_SAVE_QUERIES = 10
SUPPORT_REPLAY_QUERIES = 7


@pytest.fixture
def judged():
    roles_ensure()
    client, _organizer, works, nugget_id = Command().scenario(answers=4, sentences=3, nuggets=3, tag="queries")
    return client, works, nugget_id


def script_post(client, path: str, fields: dict):
    """As the page's script posts: a urlencoded form asking for JSON."""
    return client.post(
        path, urlencode(fields), content_type="application/x-www-form-urlencoded", HTTP_ACCEPT="application/json"
    )


def counted(post) -> tuple[int, object]:
    with CaptureQueriesContext(connection) as queries:
        response = post()
    assert response.status_code == 200, response.content
    return len(queries), response


def test_a_manual_assign_save_makes_the_counted_queries(judged):
    client, (assign, _scratch, _postedit), nugget_id = judged
    path = reverse("judge:label", args=[assign.pk, 1])
    op_id = str(uuid.uuid4())
    fields = {"nugget": nugget_id, "label": "support", "previous": "", "version": assign.version, "op_id": op_id}

    queries, response = counted(lambda: script_post(client, path, fields))
    assert queries == ASSIGN_SAVE_QUERIES
    assert response.json()["label"] == "support" and response.json()["status"] == "in progress"
    stored = AssignmentLabel.objects.get(work=assign)
    assert stored.label == "support"
    assert WorkOperation.objects.filter(work=assign, op_id=op_id).exists()
    # Written by one INSERT of its own, with the provenance objects.create gave it.
    assert (stored.created_by_id, stored.source_id, stored.assigner) == (
        assign.assessor_id,
        assign.source_id,
        assign.source.name,
    )
    assert stored.assigner_kind == AssignmentLabel.AssignerKind.MANUAL and stored.nugget_id == nugget_id
    assert stored.created_at is not None and (timezone.now() - stored.created_at).total_seconds() < 60
    assert stored.seconds_spent is not None and stored.job_id is None and stored.imported_from_id is None

    queries, response = counted(lambda: script_post(client, path, fields))  # the same operation again
    assert queries == ASSIGN_REPLAY_QUERIES
    assert response.json()["label"] == "support"
    assert AssignmentLabel.objects.filter(work=assign).count() == 1

    changed = {**fields, "label": "not_support", "previous": "support", "op_id": str(uuid.uuid4())}
    queries, response = counted(lambda: script_post(client, path, changed))
    assert queries == ASSIGN_SAVE_QUERIES
    assert AssignmentLabel.objects.get(work=assign).label == "not_support"


def test_a_support_save_makes_the_counted_queries(judged):
    client, (_assign, scratch, _postedit), _nugget_id = judged
    path = reverse("support:label", args=[scratch.pk, 1])
    fields = {"sentence": 0, "label": 2, "previous": "", "version": scratch.version, "op_id": str(uuid.uuid4())}

    queries, response = counted(lambda: script_post(client, path, fields))
    assert queries == SUPPORT_SAVE_QUERIES
    assert response.json()["label"] == 2
    assert SupportLabel.objects.get(work=scratch).label == 2

    changed = {**fields, "label": 0, "previous": 2, "op_id": str(uuid.uuid4())}
    queries, _response = counted(lambda: script_post(client, path, changed))
    assert queries == SUPPORT_SAVE_QUERIES
    assert SupportLabel.objects.get(work=scratch).label == 0

    # The first save again (its answer lost): its operation id was read with the pairs' answers, and nothing is
    # written; the label stays as the later save left it, and the replay is answered as the first attempt was.
    queries, response = counted(lambda: script_post(client, path, fields))
    assert queries == SUPPORT_REPLAY_QUERIES
    assert response.json()["label"] == 2
    assert SupportLabel.objects.get(work=scratch).label == 0


def test_the_save_finds_the_pairs_the_page_shows(judged):
    """The save reads only the answer order and one pair; both agree with the page's `topic_pairs`."""
    _client, (_assign, scratch, _postedit), _nugget_id = judged
    pairs = topic_pairs(work=scratch)
    assert pair_answer_order(work=scratch) == pairs.order
    for answer_id in pairs.order:
        found = [pair_citation(work=scratch, answer_id=answer_id, sentence_index=index) for index in range(4)]
        assert [c for c in found if c is not None] == sorted(pairs.pairs_of[answer_id])
        assert found[3] is None  # no fourth sentence


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's")
def test_on_postgresql_the_statements_of_a_save_are_prepared_and_run_again(judged):
    """After a few saves on one connection, the statements every save runs are prepared there (the settings'
    prepare_threshold): the session with its user, the locked work and the label's UPDATE are parsed and planned
    once."""
    client, (assign, _scratch, _postedit), nugget_id = judged
    path = reverse("judge:label", args=[assign.pk, 1])
    previous = ""
    for label in ["support", "not_support", "partial_support"] * 3:
        fields = {
            "nugget": nugget_id, "label": label, "previous": previous, "version": assign.version,
            "op_id": str(uuid.uuid4()),
        }
        assert script_post(client, path, fields).status_code == 200
        previous = label
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any(
        'FROM "assessor_user_session"' in statement and '"auth_user"' in statement for statement in prepared
    ), prepared
    assert any('FROM "assessor_assessorwork"' in statement and "FOR UPDATE" in statement for statement in prepared)
    assert any(statement.startswith('UPDATE "assignment_assignmentlabel"') for statement in prepared), prepared
    assert AssignmentLabel.objects.get(work=assign).label == "partial_support"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's")
def test_on_postgresql_the_answer_pages_reads_are_prepared_too(judged):
    """The ManualAssign page, read after every answer's labels, reads the nugget list, its nuggets, the answer's
    sentences and the work's labels by statements prepared once the connection has run them a few times."""
    client, (assign, _scratch, _postedit), _nugget_id = judged
    for number in [1, 2, 3, 4] * 2:
        assert client.get(reverse("judge:answer", args=[assign.pk, number])).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        prepared = [row[0] for row in cursor.fetchall()]
    reads = [
        'FROM "nuggets_nuggetset"',
        'FROM "nuggets_nugget"',
        'FROM "assessor_sentence"',
        'COUNT("assignment_assignmentlabel"."id")',
        'SELECT "assignment_assignmentlabel"."nugget_id"',
    ]
    assert [read for read in reads if not any(read in statement for statement in prepared)] == [], prepared


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the limit is PostgreSQL's")
def test_on_postgresql_the_orm_still_sends_more_values_than_the_server_binds():
    """Only the save's own statements bind on the server, which takes at most 65,535 values a statement: a query of
    the ORM with more (a bulk insert of kept scores at TREC scale has some 350,000) still runs."""
    many = [f"no-such-topic-{i}" for i in range(70_000)]
    assert Topic.objects.filter(pk__in=many).count() == 0


def test_the_queries_a_save_logs_carry_their_values(judged):
    """What a test or DEBUG's log captures of a save is each statement with its values, whichever cursor sent it."""
    client, (assign, _scratch, _postedit), nugget_id = judged
    path = reverse("judge:label", args=[assign.pk, 1])
    fields = {"nugget": nugget_id, "label": "support", "previous": "", "version": assign.version, "op_id": "op-logged"}
    with CaptureQueriesContext(connection) as captured:
        assert script_post(client, path, fields).status_code == 200
    logged = [query["sql"] for query in captured]
    assert all(isinstance(sql, str) and "%s" not in sql for sql in logged), logged
    assert any('"assessor_user_session"' in sql and client.cookies["sessionid"].value in sql for sql in logged), logged
    assert any("op-logged" in sql for sql in logged), logged


def test_the_nugget_check_of_a_save_reads_the_topics_answers_as_the_order_needs_them(judged):
    """The topic's answer ids come with the nugget check (one query less a save): the same ids, so the same order."""
    _client, (assign, _scratch, _postedit), nugget_id = judged
    topic_answers = set(Answer.objects.filter(topic_id=assign.topic_id).values_list("pk", flat=True))
    assert len(topic_answers) == 4
    with transaction.atomic():
        work = AssessorWork.objects.select_for_update().get(pk=assign.pk)
        read = nugget_list_check(work=work, nugget_id=nugget_id)
    assert sorted(read) == sorted(topic_answers) and len(read) == len(topic_answers)
    assert answer_order(work=assign, topic_answers=read) == answer_order(work=assign)
    assert id_list(None) == [] and id_list("7,3,12") == [7, 3, 12]
