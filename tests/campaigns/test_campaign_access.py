"""Every id of another campaign is "not found", page by page; a closed campaign takes no new labels, jobs or uploads
while its pages and downloads still answer; pages show a topic's published id, never its stored key.

Campaigns "a" and "b" each hold a topic "300" (stored as "300" and "300@b"), a run, an answer, qrels, a nugget
list, labels, a work of every kind, a job, an upload and a study, named apart ("-a", "-b") so that a name of b
is nothing in a. Olga organizes a only, Pat assesses in a only; Quinn assesses b's work.
"""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.http.response import HttpResponseBase
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from argue.kinds import ARGUE_WORK
from assessor.campaigns.services import campaign_create
from assessor.models import Answer, AssessorWork, Campaign, CampaignMember, Job, LabelSource, Run, Topic, Upload
from assessor.models.keys import topic_key
from assessor.models.scope import campaign_first, campaign_scope
from assessor.work.roles import Role
from assignment.kinds import ASSIGN_MANUAL
from grades.kinds import GRADE_WORK
from metaeval.models import Study
from nuggets.kinds import NUGGETS_MANUAL
from preferences.kinds import PREFERENCE_WORK
from support.kinds import SUPPORT_SCRATCH
from tests.builders import (
    make_answer,
    make_assignment_label,
    make_nugget_set,
    make_qrel,
    make_run,
    make_segment,
    make_support_label,
    make_topic,
    make_user,
    nuggets_of,
    source_of,
)
from tests.verdicts.models import VERDICT_WORK

pytestmark = pytest.mark.django_db

# The app of each assessor's namespace of judging pages, by its work kind.
KIT_KINDS = {
    "judge": ASSIGN_MANUAL,
    "support": SUPPORT_SCRATCH,
    "preferences": PREFERENCE_WORK,
    "grades": GRADE_WORK,
    "argue": ARGUE_WORK,
    "verdicts": VERDICT_WORK,
    "nuggets": NUGGETS_MANUAL,
}


@dataclass
class Side:
    """What one campaign holds, for the URLs of its pages."""

    campaign: Campaign
    slug: str
    topic: Topic
    run: Run
    answer: Answer
    job: Job
    upload: Upload
    study: Study
    works: dict[str, AssessorWork]  # by the namespace of its pages
    assessor: User
    # A topic no other campaign numbers alike: a URL names a topic by its published id, and both campaigns have a
    # topic "300", each found in its own campaign.
    only_topic: Topic


@dataclass
class Two:
    a: Side
    b: Side
    organizer: User  # of a only
    assessor: User  # Pat, of a only; his works are a's
    stranger: User  # an account of b only


def _side(campaign: Campaign, assessor: User) -> Side:
    slug = campaign.slug
    with campaign_scope(campaign):
        topic = make_topic(topic_key("300"), query=f"how do bees make honey ({slug})")
        segment = make_segment(text="Bees make honey from nectar.")
        make_qrel(topic, segment, source=f"nist-{slug}")
        run = make_run(f"baseline-{slug}")
        answer = make_answer(run, topic, [("Bees make honey.", [segment])])
        nugget_set = make_nugget_set(topic, name=f"nuggets-{slug}")
        make_assignment_label(answer, nuggets_of(nugget_set)[0], "support", assigner=f"assigner-{slug}")
        make_support_label(answer, 0, 2, method=f"method-{slug}")
        works = {
            namespace: AssessorWork.objects.create(topic=topic, assessor=assessor, kind=kind)
            for namespace, kind in KIT_KINDS.items()
        }
        AssessorWork.objects.filter(pk=works["nuggets"].pk).update(nugget_set_name=f"nuggets-{slug}")
        job = Job.objects.create(kind="preferences", output_name=f"prefs-{slug}", model="m", status=Job.Status.FAILED)
        upload = Upload.objects.create(kind="topics", file_name="topics.tsv", state=Upload.State.FAILED)
        study = Study.objects.create(
            name=f"study-{slug}",
            family="support",
            source_a=source_of("support", f"method-{slug}"),
            source_b=source_of("support", f"other-{slug}"),
            judge=source_of("support", f"judge-{slug}", kind=LabelSource.Kind.PERSON),
            assessor=assessor,
            seed=1,
        )
        only_topic = make_topic(topic_key(f"only-{slug}"), query=f"only in {slug}")
    return Side(campaign, slug, topic, run, answer, job, upload, study, works, assessor, only_topic)


def _member(user: User, campaign: Campaign) -> User:
    CampaignMember.objects.get_or_create(campaign=campaign, user=user)
    return user


@pytest.fixture
def two(db) -> Two:
    a = campaign_first()
    Campaign.objects.filter(pk=a.pk).update(slug="a", title="A")
    a.refresh_from_db()
    b = campaign_create(slug="b", title="B")
    with campaign_scope(a):
        organizer = make_user(Role.ORGANIZER, username="olga")
        pat = make_user(Role.ASSESSOR, username="pat")
    with campaign_scope(b):
        quinn = make_user(Role.ASSESSOR, username="quinn")
    return Two(a=_side(a, pat), b=_side(b, quinn), organizer=organizer, assessor=pat, stranger=quinn)


# --- the URL patterns that take an id ----------------------------------------------------------


def _patterns(resolver: URLResolver, namespace: str = "") -> Iterator[tuple[str, str, URLPattern]]:
    """(namespaced name, route, pattern) of every URL pattern, included ones too."""
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            for name, route, pattern in _patterns(entry, inner):
                yield name, str(entry.pattern) + route, pattern
        else:
            yield f"{namespace}{entry.name}", str(entry.pattern), entry


def patterns_with_parameters() -> dict[str, str]:
    """Every named page whose URL takes a parameter (Django's admin aside: its pages are the site admin's)."""
    return {
        name: route
        for name, route, pattern in _patterns(get_resolver())
        if pattern.pattern.converters and not route.startswith("admin/")
    }


# Parameters that name no row of a campaign: a job kind, an app, an LLM endpoint of the deployment.
NOT_A_CAMPAIGNS = {
    "jobs:launch": "a job kind",
    "jobs:endpoint_delete": "the deployment's LLM endpoints are every campaign's",
    "labels:leaderboard": "an app's name (its sources are chosen by ?source=)",
}

Args = Callable[[Side], list[Any]]


@dataclass(frozen=True)
class Page:
    """How to ask a page of a side's id: its arguments, the method, who asks, and what its own campaign answers
    (None: not checked, a POST that would change the row, or a page that needs labels the fixture has not)."""

    args: Args
    method: str = "get"
    who: str = "organizer"
    own: tuple[int, ...] | None = (200,)
    reason: str = ""  # what the 404 of another campaign's id says, where the page may 404 for other causes
    data: dict[str, str] = field(default_factory=dict)
    # The nugget workspace's saves refuse work that is not the person's as a refusal its script shows (JSON), not
    # a 404: the same answer for another campaign's work and for another person's.
    refused: int = 404


def _work(namespace: str) -> Args:
    return lambda side: [side.works[namespace].pk]


# A label each app takes (a save checks the label it is given before it finds the work).
LABELS = {"judge": "support", "support": "2", "preferences": "1", "grades": "2", "argue": "yes", "verdicts": "yes"}
# Work whose pages need more than the fixture gives (a bank to grade against, a submitted nugget list).
NEEDS_MORE = {"judge", "argue"}


def _kit_pages(namespace: str, start: str, item: str) -> dict[str, Page]:
    mine = "No such work of yours."
    own = None if namespace in NEEDS_MORE else (200,)
    return {
        f"{namespace}:{start}": Page(
            _work(namespace), who="assessor", own=None if namespace in NEEDS_MORE else (302,), reason=mine
        ),
        f"{namespace}:{item}": Page(lambda side: [side.works[namespace].pk, 1], who="assessor", own=None, reason=mine),
        f"{namespace}:label": Page(
            lambda side: [side.works[namespace].pk, 1],
            method="post",
            who="assessor",
            own=None,
            reason=mine,
            data={"label": LABELS[namespace], "version": "0"},
        ),
        f"{namespace}:submit": Page(_work(namespace), method="post", who="assessor", own=None, reason=mine),
        f"{namespace}:organize_work": Page(_work(namespace), own=own),
        f"{namespace}:reopen": Page(_work(namespace), method="post", own=None),
    }


PAGES: dict[str, Page] = {
    "collection:topic": Page(lambda side: [side.only_topic.pk]),
    "collection:answer": Page(lambda side: [side.answer.pk]),
    "collection:run": Page(lambda side: [side.run.run_id]),
    "collection:run_join": Page(lambda side: [side.run.run_id], own=(400,)),  # a's own: no run named to join
    "collection:upload_detail": Page(lambda side: [side.upload.pk]),
    "collection:upload_retry": Page(lambda side: [side.upload.pk], method="post", own=None),
    "collection:upload_delete": Page(lambda side: ["qrels", f"nist-{side.slug}"]),
    "collection:download_qrels": Page(lambda side: [f"nist-{side.slug}"]),
    "collection:download_nuggets": Page(lambda side: [f"nuggets-{side.slug}"]),
    "collection:download_banks": Page(lambda side: [f"nuggets-{side.slug}"], own=None),  # a's list is no bank
    "collection:download_assignments": Page(lambda side: [f"nuggets-{side.slug}", f"assigner-{side.slug}"]),
    "collection:download_scores": Page(lambda side: [f"nuggets-{side.slug}", f"assigner-{side.slug}"]),
    "collection:download_support": Page(lambda side: [f"method-{side.slug}"]),
    "collection:download_support_scores": Page(lambda side: [f"method-{side.slug}"]),
    # The families whose labels the fixture does not make: another campaign's name is still no page here.
    "collection:download_borda_scores": Page(lambda side: [f"prefs-{side.slug}"], own=None),
    "collection:download_grade_scores": Page(lambda side: [f"grades-{side.slug}"], own=None),
    "collection:download_argue_scores": Page(lambda side: [f"argue-{side.slug}"], own=None),
    "collection:download_argue_judgments": Page(lambda side: [f"argue-{side.slug}"], own=None),
    "labels:download": Page(lambda side: ["verdicts", f"verdicts-{side.slug}"], own=None),
    "labels:score_file": Page(lambda side: ["verdicts", f"verdicts-{side.slug}"], own=None),
    "jobs:detail": Page(lambda side: [side.job.pk]),
    "jobs:calls": Page(lambda side: [side.job.pk]),
    "jobs:cancel": Page(lambda side: [side.job.pk], method="post", own=None),
    "jobs:resume": Page(lambda side: [side.job.pk], method="post", own=None),
    "accounts:password": Page(lambda side: [side.assessor.pk], method="post", own=None),
    "accounts:active": Page(lambda side: [side.assessor.pk], method="post", own=None, data={"active": "1"}),
    "work_notes": Page(_work("support"), method="post", own=None),
    "nuggets:work": Page(_work("nuggets"), who="assessor", own=None, reason="No such work of yours."),
    "nuggets:op": Page(
        lambda side: [side.works["nuggets"].pk, "add"],
        method="post",
        who="assessor",
        own=None,
        reason="This topic is not given to you.",
        refused=400,
    ),
    "nuggets:submit": Page(
        _work("nuggets"),
        method="post",
        who="assessor",
        own=None,
        reason="This topic is not given to you.",
        refused=400,
    ),
    "nuggets:heartbeat": Page(_work("nuggets"), method="post", who="assessor", own=None),
    "nuggets:organize_topic": Page(lambda side: [side.only_topic.pk]),
    "nuggets:reopen": Page(_work("nuggets"), method="post", own=None),
    "assignment:rerun_stale": Page(lambda side: [f"assigner-{side.slug}"], method="post", own=None),
    "grades:rerun_stale": Page(lambda side: [f"grades-{side.slug}"], method="post", own=None),
    "metaeval:study": Page(lambda side: [side.study.name]),
    "metaeval:study_plot": Page(lambda side: [side.study.name]),
    "metaeval:study_csv": Page(lambda side: [side.study.name]),
    "metaeval:study_jsonl": Page(lambda side: [side.study.name]),
    **_kit_pages("judge", "assign", "answer"),
    **_kit_pages("support", "judge", "answer"),
    **_kit_pages("preferences", "judge", "pair"),
    **_kit_pages("grades", "judge", "report"),
    **_kit_pages("argue", "judge", "sentence"),
    **_kit_pages("verdicts", "judge", "answer"),
}


def test_every_page_that_takes_an_id_is_in_the_table():
    """A new page with a parameter must be added to PAGES (or NOT_A_CAMPAIGNS, saying why)."""
    listed = patterns_with_parameters()
    missing = sorted(set(listed) - set(PAGES) - set(NOT_A_CAMPAIGNS))
    assert missing == [], [f"{name}: {listed[name]}" for name in missing]
    assert sorted(set(PAGES) - set(listed)) == []


def _ask(user: User, prefix: str, name: str, page: Page, side: Side) -> tuple[int, str]:
    client = Client()
    client.force_login(user)
    url = prefix + reverse(name, args=page.args(side))
    if page.method == "post":
        response = client.post(url, page.data, HTTP_ACCEPT="application/json" if page.refused != 404 else "text/html")
    else:
        response = client.get(url)
    return response.status_code, _read(response)


def _read(response: HttpResponseBase) -> str:
    """The whole body. A download streams from a server-side cursor: read to its end, the
    test client closes it; left half-read, the cursor is closed by the garbage collector
    in a later test's transaction, which it aborts."""
    if response.streaming:
        return b"".join(response.streaming_content).decode(errors="replace")  # type: ignore[attr-defined]
    return response.content.decode(errors="replace")


def _reason_shown(body: str, reason: str) -> bool:
    return reason.replace("'", "&#x27;") in body or reason in body


@pytest.mark.parametrize("name", sorted(PAGES))
def test_another_campaigns_id_is_not_found_and_ones_own_is_found(two, name):
    page = PAGES[name]
    user = two.organizer if page.who == "organizer" else two.assessor
    status, body = _ask(user, "/c/a", name, page, two.b)
    assert status == page.refused, f"{name} of b's id asked in a: {status}"
    if page.reason:
        assert _reason_shown(body, page.reason), body[-600:]
    # In b itself a member of a only is a stranger: the campaign is not found at all.
    status, body = _ask(user, "/c/b", name, page, two.b)
    assert status == 404 and "No such campaign." in body, (name, status)
    if page.own is not None:
        status, body = _ask(user, "/c/a", name, page, two.a)
        assert status in page.own, f"{name} of a's own id: {status}"


def test_an_assessors_own_work_is_theirs_in_every_campaign_they_belong_to(two):
    """Pat, made a member of b too, works on b's work given to him from b's pages and from his own."""
    CampaignMember.objects.create(campaign=two.b.campaign, user=two.assessor)
    AssessorWork.objects.filter(pk=two.b.works["support"].pk).delete()
    work = AssessorWork.objects.create(topic=two.b.topic, assessor=two.assessor, kind=SUPPORT_SCRATCH)
    client = Client()
    client.force_login(two.assessor)
    for prefix in ("", "/c/b"):
        assert client.get(prefix + reverse("support:judge", args=[work.pk])).status_code == 302
    # Quinn's work stays his: not found for Pat, whatever the campaign.
    quinn_work = two.b.works["grades"]
    for prefix in ("", "/c/b"):
        assert client.get(prefix + reverse("grades:judge", args=[quinn_work.pk])).status_code == 404


def test_an_assessor_taken_out_of_a_campaign_no_longer_reaches_its_work_until_added_again(two):
    work = two.a.works["support"]
    client = Client()
    client.force_login(two.assessor)
    url = reverse("support:judge", args=[work.pk])
    out = StringIO()
    call_command("campaign", "members", "a", "pat", "--remove", stdout=out)
    assert "Removed 1 of 1 from a" in out.getvalue()
    for prefix in ("", "/c/a"):
        assert client.get(prefix + url).status_code == 404, prefix
    assert f'href="{url}"' not in client.get(reverse("home")).content.decode()
    assert AssessorWork.objects.unscoped().filter(pk=work.pk).exists()  # kept, out of reach
    call_command("campaign", "members", "a", "pat", stdout=StringIO())
    assert client.get(url).status_code == 302
    assert f'href="{url}"' in client.get(reverse("home")).content.decode()


def test_an_assessor_taken_out_of_a_campaign_can_no_longer_save_a_label_to_its_work(two):
    """The saves read the work by a statement written once: the membership rule is in it too, and a page left open
    saves nothing once its assessor is out of the campaign."""
    client = _client(two.assessor)
    saves = {
        "judge": {"label": "support", "version": "0", "previous": ""},
        "support": {"label": "2", "version": "0", "previous": "", "sentence": "0"},
    }
    call_command("campaign", "members", "a", "pat", "--remove", stdout=StringIO())
    for namespace, fields in saves.items():
        url = reverse(f"{namespace}:label", args=[two.a.works[namespace].pk, 1])
        assert client.post(url, fields, HTTP_ACCEPT="application/json").status_code == 404, namespace
    call_command("campaign", "members", "a", "pat", stdout=StringIO())
    for namespace, fields in saves.items():
        url = reverse(f"{namespace}:label", args=[two.a.works[namespace].pk, 1])
        # Reached again: what stops this save now is the work's own state (given without a label source).
        assert client.post(url, fields, HTTP_ACCEPT="application/json").status_code == 400, namespace


# --- a closed campaign --------------------------------------------------------------------------


def _close(campaign: Campaign) -> None:
    Campaign.objects.filter(pk=campaign.pk).update(closed_at=timezone.now())


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


CLOSED = "The campaign &#x27;A&#x27; is closed: its labels, jobs and files can no longer change."


def test_a_closed_campaign_refuses_a_label_save_as_a_conflict_with_the_message(two):
    _close(two.a.campaign)
    work = two.a.works["support"]
    url = "/c/a" + reverse("support:label", args=[work.pk, 1])
    response = _client(two.assessor).post(
        url, {"label": "2", "version": "0", "previous": ""}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 409
    assert response.json()["error"] == "The campaign 'A' is closed: its labels, jobs and files can no longer change."


def test_a_closed_campaign_refuses_a_label_save_through_the_assessors_own_pages_too(two):
    """The work's campaign decides, not the page's: the save without a campaign in its URL is refused the same."""
    _close(two.a.campaign)
    work = two.a.works["judge"]
    response = _client(two.assessor).post(
        reverse("judge:label", args=[work.pk, 1]), {"label": "support", "version": "0"}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 409
    assert "is closed" in response.json()["error"]


def test_a_closed_campaign_refuses_a_nugget_edit_a_submit_and_credits_no_time(two):
    _close(two.a.campaign)
    work = two.a.works["nuggets"]
    client = _client(two.assessor)
    for url in (
        reverse("nuggets:op", args=[work.pk, "add"]),
        reverse("nuggets:submit", args=[work.pk]),
        reverse("nuggets:heartbeat", args=[work.pk]),
        reverse("support:submit", args=[two.a.works["support"].pk]),
    ):
        response = client.post(url, {"text": "a fact", "version": "1"}, HTTP_ACCEPT="application/json")
        assert response.status_code == 409, url
        assert "is closed" in response.json()["error"], url
    work.refresh_from_db()
    assert work.active_seconds == 0


def test_an_open_campaigns_label_save_goes_through(two):
    """The refusal is the closed campaign's: b's own assessor saves in b while a is closed."""
    _close(two.a.campaign)
    work = two.b.works["nuggets"]
    response = _client(two.b.assessor).post(reverse("nuggets:heartbeat", args=[work.pk]))
    assert response.status_code == 200


def test_a_closed_campaign_refuses_a_job_launch_and_resume_from_its_pages(two, settings):
    _close(two.a.campaign)
    client = _client(two.organizer)
    jobs_before = Job.objects.unscoped().count()
    response = client.post("/c/a" + reverse("jobs:launch", args=["preferences"]), {"output_name": "x"})
    assert response.status_code == 403
    assert CLOSED in response.content.decode()
    response = client.post("/c/a" + reverse("jobs:resume", args=[two.a.job.pk]), follow=True)
    assert CLOSED in response.content.decode()
    assert Job.objects.unscoped().count() == jobs_before
    two.a.job.refresh_from_db()
    assert two.a.job.status == Job.Status.FAILED


def test_a_closed_campaign_refuses_an_upload_a_retry_and_a_deletion(two, tmp_path, settings):
    settings.UPLOAD_DIR = tmp_path
    _close(two.a.campaign)
    client = _client(two.organizer)
    uploads_before = Upload.objects.unscoped().count()
    with campaign_scope(two.a.campaign):
        topics_before = sorted(Topic.objects.values_list("pk", flat=True))
    page = client.post(
        "/c/a" + reverse("collection:upload"),
        {"kind": "topics", "file": _file("300\thow do bees make honey\n")},
        follow=True,
    )
    assert CLOSED in page.content.decode()
    page = client.post("/c/a" + reverse("collection:upload_retry", args=[two.a.upload.pk]), follow=True)
    assert CLOSED in page.content.decode()
    page = client.post("/c/a" + reverse("collection:upload_delete", args=["qrels", "nist-a"]), follow=True)
    assert CLOSED in page.content.decode()
    assert Upload.objects.unscoped().count() == uploads_before
    with campaign_scope(two.a.campaign):
        assert sorted(Topic.objects.values_list("pk", flat=True)) == topics_before == ["300", "only-a"]
        download = client.get("/c/a" + reverse("collection:download_qrels", args=["nist-a"]))
        assert download.status_code == 200
        assert "300" in _read(download)


def test_a_closed_campaign_refuses_giving_work(two):
    _close(two.a.campaign)
    client = _client(two.organizer)
    works_before = AssessorWork.objects.unscoped().count()
    page = client.post(
        "/c/a" + reverse("support:organize"), {"topics": "300", "assessor": two.assessor.pk, "condition": SUPPORT_SCRATCH},
        follow=True,
    )  # fmt: skip
    assert CLOSED in page.content.decode()
    assert AssessorWork.objects.unscoped().count() == works_before


CLOSED_PAGES = [
    "collection:topics",
    "collection:runs",
    "collection:leaderboards",
    "collection:upload",
    "jobs:list",
    "support:organize",
]


@pytest.mark.parametrize("name", CLOSED_PAGES)
def test_a_closed_campaigns_pages_still_answer(two, name):
    _close(two.a.campaign)
    assert _client(two.organizer).get("/c/a" + reverse(name)).status_code == 200


def test_a_closed_campaigns_downloads_and_detail_pages_still_answer(two):
    _close(two.a.campaign)
    client = _client(two.organizer)
    for name in ("collection:topic", "collection:run", "jobs:detail", "collection:download_qrels", "metaeval:study"):
        page = PAGES[name]
        response = client.get("/c/a" + reverse(name, args=page.args(two.a)))
        assert response.status_code == 200, name
        _read(response)
    assistant = _client(two.assessor)
    assert assistant.get(reverse("support:judge", args=[two.a.works["support"].pk])).status_code == 302


def _file(text: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("topics.tsv", text.encode())


# --- topic ids on pages -------------------------------------------------------------------------


def _text(html: str) -> str:
    """The page's text, markup aside."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


def test_pages_of_campaign_b_show_its_topics_published_id_never_the_stored_key(two):
    organizer_b = make_user(Role.ORGANIZER, username="bob")
    CampaignMember.objects.create(campaign=two.b.campaign, user=organizer_b)
    client = _client(organizer_b)
    side = two.b
    assert side.topic.pk == "300@b"
    urls = [
        reverse("collection:topic", args=[side.topic.pk]),
        reverse("collection:run", args=[side.run.run_id]),
        reverse("collection:answer", args=[side.answer.pk]),
        reverse("collection:topics"),
        reverse("nuggets:organize_topic", args=[side.topic.pk]),
        reverse("support:organize_work", args=[side.works["support"].pk]),
        reverse("support:organize"),
    ]
    for url in urls:
        response = client.get("/c/b" + url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert "300" in _text(html), url
        assert "300@b" not in html, (url, [line for line in html.splitlines() if "300@b" in line])
    heading = re.search(r"<h1>(.*?)</h1>", client.get("/c/b" + urls[0]).content.decode(), re.S)
    assert heading and _text(heading.group(1)).split() == ["Topic", "300"]


def test_a_topics_url_names_its_published_id_and_each_campaign_finds_its_own(two):
    client = _client(make_user(Role.ADMIN, username="root"))
    url = reverse("collection:topic", args=[two.b.topic.pk])
    assert url == "/collection/topics/300/"  # from b's stored key "300@b"
    assert "how do bees make honey (a)" in client.get("/c/a" + url).content.decode()
    assert "how do bees make honey (b)" in client.get("/c/b" + url).content.decode()
    # A stored key is no URL of a topic, and a's key has no meaning in b.
    assert client.get("/c/b/collection/topics/300@b/").status_code == 404
    assert client.get("/c/b" + reverse("nuggets:organize_topic", args=["300"])).status_code == 200
    assert client.get("/c/b/nuggets/organize/topic/300@b/").status_code == 404


def test_a_topic_typed_by_its_published_id_is_given_in_campaign_b(two):
    """The organizer types "300" in b: the topic given is b's "300@b"; a's key is unknown there."""
    organizer_b = make_user(Role.ORGANIZER, username="bob")
    CampaignMember.objects.create(campaign=two.b.campaign, user=organizer_b)
    CampaignMember.objects.create(campaign=two.b.campaign, user=two.assessor)
    client = _client(organizer_b)
    AssessorWork.objects.unscoped().filter(topic=two.b.topic).delete()
    url = "/c/b" + reverse("support:organize")
    page = client.post(
        url, {"topics_typed": "300", "assessor": two.assessor.pk, "condition": SUPPORT_SCRATCH}, follow=True
    )
    assert page.status_code == 200
    assert "given to pat: 300." in page.content.decode()
    assert AssessorWork.objects.unscoped().get(topic=two.b.topic).assessor == two.assessor
