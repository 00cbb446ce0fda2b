"""The workspace, queue and organizer pages: permissions by URL, script operations, fixed query counts."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessor.models import AssessorWork
from assessor.work.roles import Role
from nuggets.models import NuggetSet
from tests.builders import make_topic, make_user
from tests.scenarios import make_draft_set, make_given_topic, nugget_set_of, texts_of

pytestmark = pytest.mark.django_db


SCRIPT = {"HTTP_ACCEPT": "application/json"}  # what the workspace script sends


def logged_in(client, user):
    client.force_login(user)
    return client


def op_url(work, operation):
    return reverse("nuggets:op", args=[work.pk, operation])


# --- Who reaches what --------------------------------------------------------


def test_an_assessor_reaches_only_their_own_topics(client):
    mine = make_given_topic(condition="manual")
    theirs = make_given_topic(condition="manual")
    logged_in(client, mine.assessor)
    assert client.get(reverse("nuggets:work", args=[mine.pk])).status_code == 200
    assert client.get(reverse("nuggets:work", args=[theirs.pk])).status_code == 404
    response = client.post(op_url(theirs, "add"), {"text": "sneaky", "version": 0}, **SCRIPT)
    assert response.status_code == 400 and texts_of(theirs) == []
    assert client.post(reverse("nuggets:heartbeat", args=[theirs.pk])).status_code == 404
    assert client.post(reverse("nuggets:submit", args=[theirs.pk]), {"version": 0}, **SCRIPT).status_code == 400


def test_an_assessor_never_reaches_organizer_pages(client):
    work = make_given_topic(condition="manual")
    logged_in(client, work.assessor)
    assert client.get(reverse("nuggets:organize")).status_code == 403
    assert client.post(reverse("nuggets:organize"), {}).status_code == 403
    assert client.get(reverse("nuggets:organize_topic", args=[work.topic_id])).status_code == 403
    assert client.post(reverse("nuggets:reopen", args=[work.pk])).status_code == 403


def test_an_organizer_does_not_edit_an_assessors_topic(client):
    work = make_given_topic(condition="manual")
    logged_in(client, make_user(Role.ORGANIZER))
    assert client.get(reverse("nuggets:work", args=[work.pk])).status_code == 403
    assert client.post(op_url(work, "add"), {"text": "x"}).status_code == 403


def test_anonymous_visitors_are_sent_to_log_in(client):
    work = make_given_topic(condition="manual")
    for url in (reverse("nuggets:work", args=[work.pk]), reverse("nuggets:queue"), reverse("nuggets:organize")):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_index_sends_each_role_to_its_page(client):
    work = make_given_topic(condition="manual")
    assert logged_in(client, work.assessor).get(reverse("nuggets:index")).url == reverse("home")
    assert logged_in(client, make_user(Role.ORGANIZER)).get(reverse("nuggets:index")).url == reverse("nuggets:organize")


# --- The assessor's pages ----------------------------------------------------


def test_the_one_queue_lists_nugget_work_with_condition_status_count_and_time(client):
    """The workspace's own queue ("My topics", nugget work only) is gone: its address leads to the one queue."""
    work = make_given_topic(condition="auto_edit", drafts=["a", "b", "c"])
    AssessorWork.objects.filter(pk=work.pk).update(active_seconds=3725)
    make_given_topic(condition="manual")  # someone else's
    assessor = logged_in(client, work.assessor)
    assert assessor.get(reverse("nuggets:queue")).url == reverse("home")
    page = assessor.get(reverse("home")).content.decode()
    assert work.topic_id in page and "AutoNuggets+Edits" in page and "not started" in page
    assert "1 h 02 min" in page
    assert page.count('href="/nuggets/work/') == 1
    assert "3 / 30 nuggets" in page  # three drafts, of the 30 a post-edited list may hold while editing
    workspace = assessor.get(reverse("nuggets:work", args=[work.pk])).content.decode()
    assert '<a href="/">My work</a>' in workspace and "My topics" not in workspace


def test_the_workspace_shows_the_query_and_only_relevant_segments(client):
    work = make_given_topic(condition="manual", grades=[3, 0, 1], query="why are nuggets atomic")
    page = logged_in(client, work.assessor).get(reverse("nuggets:work", args=[work.pk])).content.decode()
    assert "why are nuggets atomic" in page
    assert "grade 3 passage" in page and "grade 1 passage" in page and "grade 0 passage" not in page
    assert page.index("grade 3 passage") < page.index("grade 1 passage")
    assert "Keyboard shortcuts" in page


def test_a_script_operation_returns_the_new_panel(client):
    work = make_given_topic(condition="manual")
    logged_in(client, work.assessor)
    response = client.post(op_url(work, "add"), {"text": "nuggets are atomic", "importance": "vital", "version": 0, "op_id": "a1"}, **SCRIPT)
    assert response.status_code == 200
    html = response.json()["panel"]
    assert html.lstrip().startswith('<section id="nugget-panel"') and 'data-version="1"' in html
    assert "nuggets are atomic" in html and "<html" not in html
    assert texts_of(work) == ["nuggets are atomic"]


def test_a_plain_form_post_redirects_back_to_the_workspace(client):
    work = make_given_topic(condition="manual")
    logged_in(client, work.assessor)
    response = client.post(op_url(work, "add"), {"text": "without javascript", "version": 0})
    assert response.status_code == 302 and response["Location"].startswith(reverse("nuggets:work", args=[work.pk]))
    response = client.post(op_url(work, "add"), {"text": "stale", "version": 0}, follow=True)
    assert "changed elsewhere" in response.content.decode()


def test_a_conflict_is_a_409_with_a_clear_message(client):
    work = make_given_topic(condition="manual")
    logged_in(client, work.assessor)
    client.post(op_url(work, "add"), {"text": "tab one", "version": 0}, **SCRIPT)
    response = client.post(op_url(work, "add"), {"text": "tab two", "version": 0}, **SCRIPT)
    assert response.status_code == 409
    assert response.json()["kind"] == "conflict" and "another tab" in response.json()["error"]
    assert texts_of(work) == ["tab one"]


def test_a_refused_operation_is_a_400_with_the_reason(client):
    work = make_given_topic(condition="manual")
    logged_in(client, work.assessor)
    response = client.post(op_url(work, "add"), {"text": "   ", "version": 0}, **SCRIPT)
    assert response.status_code == 400 and response.json() == {"error": "A nugget needs some text.", "kind": "invalid"}
    assert client.post(op_url(work, "nonsense"), {"version": 0}, **SCRIPT).status_code == 400


def test_submit_freezes_the_panel(client):
    work = make_given_topic(condition="manual")
    logged_in(client, work.assessor)
    client.post(op_url(work, "add"), {"text": "a", "version": 0}, **SCRIPT)
    refused = client.post(reverse("nuggets:submit", args=[work.pk]), {"version": 1}, **SCRIPT)
    assert refused.status_code == 400 and "missing on nugget 1" in refused.json()["error"]
    nugget = nugget_set_of(work).nuggets.get()
    client.post(op_url(work, "importance"), {"nugget": nugget.pk, "importance": "okay", "version": 1}, **SCRIPT)
    response = client.post(reverse("nuggets:submit", args=[work.pk]), {"version": 2}, **SCRIPT)
    assert response.status_code == 200 and 'data-frozen="1"' in response.json()["panel"]
    assert client.post(op_url(work, "add"), {"text": "b", "version": 3}, **SCRIPT).status_code == 409


def test_the_heartbeat_answers_time_and_version(client):
    work = make_given_topic(condition="manual")
    response = logged_in(client, work.assessor).post(reverse("nuggets:heartbeat", args=[work.pk]))
    assert response.json() == {"active_seconds": 0.0, "time": "0 s", "version": 0}
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.IN_PROGRESS and work.last_activity_at is not None


# --- A fixed number of queries per request -------------------------------------------


def queries_of_requests(client, *, nuggets: int, segments: int) -> tuple[int, int, int]:
    work = make_given_topic(condition="auto_edit", drafts=[f"draft {i}" for i in range(nuggets)], grades=[1 + i % 3 for i in range(segments)])
    logged_in(client, work.assessor)
    first = nugget_set_of(work).nuggets.first()
    client.get(reverse("nuggets:work", args=[work.pk]))  # warm the session
    counts = []
    # Each count is taken at once: the next request resets the connection's query log.
    with CaptureQueriesContext(connection) as page:
        assert client.get(reverse("nuggets:work", args=[work.pk])).status_code == 200
    counts.append(len(page))
    with CaptureQueriesContext(connection) as edit:
        response = client.post(op_url(work, "edit"), {"nugget": first.pk, "text": "reworded", "version": 0}, **SCRIPT)
        assert response.status_code == 200
    counts.append(len(edit))
    with CaptureQueriesContext(connection) as heartbeat:
        client.post(reverse("nuggets:heartbeat", args=[work.pk]))
    counts.append(len(heartbeat))
    return tuple(counts)


def test_the_query_count_does_not_grow_with_the_topic(client):
    small = queries_of_requests(client, nuggets=5, segments=10)
    large = queries_of_requests(client, nuggets=30, segments=100)
    assert min(small) > 0
    assert small == large


# --- The organizer's pages ---------------------------------------------------------


def test_an_organizer_gives_a_topic_with_its_condition(client):
    organizer = make_user(Role.ORGANIZER)
    assessor = make_user(Role.ASSESSOR)
    topic = make_topic()
    make_draft_set(topic, ["d1", "d2"])
    logged_in(client, organizer)
    response = client.post(reverse("nuggets:organize"), {"topics": topic.pk, "assessor": assessor.pk, "condition": "auto_edit"})
    assert response.status_code == 302
    work = AssessorWork.objects.get()
    assert (work.assessor, work.kind, work.created_by) == (assessor, "nuggets_auto_edit", organizer)
    assert texts_of(work) == ["d1", "d2"]
    other = make_user(Role.ASSESSOR)
    response = client.post(reverse("nuggets:organize"), {"topics": topic.pk, "assessor": other.pk, "condition": "manual"})
    assert response.status_code == 400 and "already given to" in response.content.decode()


def test_an_organizer_gives_several_topics_at_once_or_none(client):
    organizer = make_user(Role.ORGANIZER)
    assessor = make_user(Role.ASSESSOR)
    first, second, taken = make_topic(), make_topic(), make_given_topic(condition="manual")
    logged_in(client, organizer)
    url = reverse("nuggets:organize")
    refused = client.post(url, {"topics": f"{first.pk}, {taken.topic_id}", "assessor": assessor.pk, "condition": "manual"})
    assert refused.status_code == 400 and "Nothing was given" in refused.content.decode()
    unknown = client.post(url, {"topics": f"{first.pk} 2024-nope", "assessor": assessor.pk, "condition": "manual"})
    assert unknown.status_code == 400 and "Unknown topic(s): 2024-nope" in unknown.content.decode()
    assert AssessorWork.objects.filter(assessor=assessor).count() == 0
    given = client.post(url, {"topics": f"{first.pk}\n{second.pk}", "assessor": assessor.pk, "condition": "manual"})
    assert given.status_code == 302
    assert sorted(AssessorWork.objects.filter(assessor=assessor).values_list("topic_id", flat=True)) == sorted([first.pk, second.pk])


def test_the_organizer_sees_nuggets_lineage_log_and_time(client):
    work = make_given_topic(condition="auto_edit", drafts=["d1", "d2", "d3", "d4"])
    assessor = work.assessor
    logged_in(client, assessor)
    ids = list(nugget_set_of(work).nuggets.values_list("id", flat=True))
    client.post(op_url(work, "merge"), {"nuggets": [ids[0], ids[1]], "text": "d1 and d2", "version": 0}, **SCRIPT)
    client.post(op_url(work, "delete"), {"nugget": ids[3], "version": 1}, **SCRIPT)
    client.post(op_url(work, "add"), {"text": "brand new", "version": 2}, **SCRIPT)
    AssessorWork.objects.filter(pk=work.pk).update(active_seconds=3600)
    logged_in(client, make_user(Role.ORGANIZER))
    page = client.get(reverse("nuggets:organize_topic", args=[work.topic_id])).content.decode()
    # drafts 4: kept 1 (d3), merged 2 (d1, d2), deleted 1 (d4), added 1, final 3
    assert '<td class="num">4</td><td class="num">1</td><td class="num">0</td><td class="num">2</td><td class="num">0</td><td class="num">1</td><td class="num">1</td><td class="num">3</td>' in page
    assert "“d1” , “d2”" not in page and "+ “d1 and d2”" in page and "− “d4”" in page
    assert "1 h 00 min" in page


def test_average_time_per_condition_counts_submitted_topics_only(client):
    times = {("manual", True): [9000, 8000], ("auto_edit", True): [3600], ("auto_edit", False): [100]}
    for (condition, submitted), seconds in times.items():
        for value in seconds:
            work = make_given_topic(condition=condition, drafts=["d"])
            status = AssessorWork.Status.SUBMITTED if submitted else AssessorWork.Status.IN_PROGRESS
            AssessorWork.objects.filter(pk=work.pk).update(active_seconds=value, status=status)
    logged_in(client, make_user(Role.ORGANIZER))
    page = client.get(reverse("nuggets:organize")).content.decode()
    # ManualNuggets: (9000 + 8000) / 2 = 8500 s = 2 h 21 min; AutoNuggets+Edits: 3600 s (the open topic is left out)
    assert 'data-seconds="8500">2 h 21 min' in page
    assert 'data-seconds="3600">1 h 00 min' in page


def test_an_organizer_reopens_a_submitted_topic(client):
    work = make_given_topic(condition="manual")
    logged_in(client, work.assessor)
    client.post(op_url(work, "add"), {"text": "a", "importance": "vital", "version": 0}, **SCRIPT)
    client.post(reverse("nuggets:submit", args=[work.pk]), {"version": 1}, **SCRIPT)
    logged_in(client, make_user(Role.ORGANIZER))
    client.post(reverse("nuggets:reopen", args=[work.pk]), {"reason": "one nugget is missing"})
    assert nugget_set_of(work).status == NuggetSet.Status.OPEN
    page = client.get(reverse("nuggets:organize_topic", args=[work.topic_id])).content.decode()
    assert "reopened: one nugget is missing" in page


def test_the_organizer_sees_lineage_totals_across_topics(client):
    # Topic 1: 3 drafts, d0 kept, d1 + d2 merged. Topic 2: 2 drafts, d0 split in two, d1 deleted, one added.
    one = make_given_topic(condition="auto_edit", drafts=["a0", "a1", "a2"])
    two = make_given_topic(condition="auto_edit", drafts=["b0", "b1"])
    logged_in(client, one.assessor)
    a = list(nugget_set_of(one).nuggets.values_list("id", flat=True))
    client.post(op_url(one, "merge"), {"nuggets": [a[1], a[2]], "version": 0}, **SCRIPT)
    logged_in(client, two.assessor)
    b = list(nugget_set_of(two).nuggets.values_list("id", flat=True))
    client.post(op_url(two, "split"), {"nugget": b[0], "texts": "x\ny", "version": 0}, **SCRIPT)
    client.post(op_url(two, "delete"), {"nugget": b[1], "version": 1}, **SCRIPT)
    client.post(op_url(two, "add"), {"text": "new", "version": 2}, **SCRIPT)
    logged_in(client, make_user(Role.ORGANIZER))
    page = client.get(reverse("nuggets:organize")).content.decode()
    # drafts 5, kept 1, reworded 0, merged 2, split 1, deleted 1, added 1, final 2 + 3 = 5
    cells = "".join(f'<td class="num">{n}</td>' for n in (5, 1, 0, 2, 1, 1, 1, 5))
    assert f"<td><code>auto_edit</code></td>{cells}" in page


def test_the_organizer_overview_costs_the_same_queries_for_many_topics(client):
    organizer = make_user(Role.ORGANIZER)
    logged_in(client, organizer)

    def count() -> int:
        client.get(reverse("nuggets:organize"))
        with CaptureQueriesContext(connection) as queries:
            assert client.get(reverse("nuggets:organize")).status_code == 200
        return len(queries)

    make_given_topic(condition="auto_edit", drafts=["a", "b"], organizer=organizer)
    one = count()
    for _ in range(4):
        make_given_topic(condition="auto_edit", drafts=["a", "b", "c"], organizer=organizer)
        make_given_topic(condition="manual", organizer=organizer)
    assert count() == one


def test_reopening_another_kinds_work_here_is_no_page_not_an_error(client):
    """The nugget reopening of a support work's id: 404, and the work is left as it was (it answered 500)."""
    from support.kinds import SUPPORT_SCRATCH

    work = AssessorWork.objects.create(
        topic=make_topic(), assessor=make_user(Role.ASSESSOR), kind=SUPPORT_SCRATCH, status=AssessorWork.Status.SUBMITTED
    )
    logged_in(client, make_user(Role.ORGANIZER))
    assert client.post(reverse("nuggets:reopen", args=[work.pk]), {"reason": "x"}).status_code == 404
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED


def test_the_service_refuses_to_reopen_work_without_a_list():
    from assessor.work.services import WorkError
    from nuggets.services import nugget_set_reopen

    work = make_given_topic(condition="manual")
    NuggetSet.objects.filter(name=work.nugget_set_name).delete()
    with pytest.raises(WorkError, match="no nugget list to reopen"):
        nugget_set_reopen(work_id=work.pk, by=make_user(Role.ORGANIZER))
