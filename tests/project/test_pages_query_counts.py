"""The query counts docs/pages.md gives ("Fixed query counts") are the ones the pages make, at two collection sizes.

The test reads the doc's table (URL name, who, what, queries), requests each page as that person on a
collection of two topics and runs, then again once a collection of five topics and runs is added beside it, and
fails naming the page, the doc's figure and the measured ones: a doc figure that no longer holds, or a page whose
count grows with the collection, cannot go unnoticed.

The pages are requested outside any transaction, as a served request is (inside a test's transaction every
`atomic()` of a view would add a SAVEPOINT and its RELEASE to the count): the collection is built once for the
module and the database flushed after it, as a transactional test's is.
"""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from argue.kinds import ARGUE_WORK
from assessor.models import Answer, AssessorWork, LabelSource, Topic, Upload
from assessor.registry import registry
from assessor.work.roles import Role
from assignment.selectors import FAMILY as CONDITIONS
from nuggets.models import NuggetSet
from tests.builders import REPO, make_batch, make_collection, make_topic, make_user
from tests.scenarios import LLM_ASSIGNER, plant_llm_output

DOC = REPO / "docs" / "pages.md"
HEADING = "## Fixed query counts"
COLUMNS = ["URL name", "who", "what the test's collection shows on it", "queries"]
SIZES = (2, 5)

# Marked so that pytest-django makes the test database; the pages are measured by the module's fixture, before
# any test's transaction begins.
pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Figure:
    """What the doc says: a count by database vendor, and where a page's count grows, by how much per what."""

    count: dict[str, int]
    per: int = 0
    unit: str = ""

    def expected(self, vendor: str, units: int) -> int:
        return self.count[vendor] + self.per * units


@dataclass(frozen=True)
class DocRow:
    url_name: str
    who: str
    figure: Figure

    @property
    def key(self) -> str:
        return f"{self.url_name} ({self.who})"


def _figure(text: str, page: str) -> Figure:
    """`12`, or `12 on SQLite, 13 on PostgreSQL` where the databases differ; either followed by `+ 1 per <unit>`
    for a page whose count grows with what the test counts as <unit> (GROWTH)."""
    parts = re.fullmatch(r"(.+?)(?: \+ (\d+) per (.+))?", text)
    assert parts is not None
    counted, per, unit = parts[1], int(parts[2] or 0), parts[3] or ""
    if re.fullmatch(r"\d+", counted):
        count = {"sqlite": int(counted), "postgresql": int(counted)}
    elif both := re.fullmatch(r"(\d+) on SQLite, (\d+) on PostgreSQL", counted):
        count = {"sqlite": int(both[1]), "postgresql": int(both[2])}
    else:
        raise AssertionError(f"docs/pages.md, {page}: the queries column holds {text!r}, not a count")
    assert not unit or unit in GROWTH, f"docs/pages.md, {page}: the test counts no {unit!r} (it counts {list(GROWTH)})"
    return Figure(count=count, per=per, unit=unit)


def doc_rows() -> list[DocRow]:
    """The rows of the first table under the heading, read by their columns."""
    lines = DOC.read_text().splitlines()
    start = lines.index(HEADING)
    table = list(_table_after(lines[start + 1 :]))
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert header == COLUMNS, f"docs/pages.md: the table under {HEADING!r} has the columns {header}, not {COLUMNS}"
    rows = []
    for line in table[2:]:
        url_name, who, _what, queries = (cell.strip() for cell in line.strip("|").split("|"))
        page = f"{url_name} ({who})"
        rows.append(DocRow(url_name=url_name.strip("`"), who=who, figure=_figure(queries, page)))
    return rows


def _table_after(lines: list[str]) -> Iterator[str]:
    started = False
    for line in lines:
        if line.startswith("|"):
            started = True
            yield line
        elif started or line.startswith("#"):
            return


# --- the pages, as the test requests them ------------------------------------------------------------------------


@dataclass(frozen=True)
class Built:
    size: int
    organizer: User
    assessor: User
    upload: Upload


def _home(built: Built) -> str:
    return reverse("home")


PAGES: dict[str, Callable[[Built], str]] = {
    "home (organizer)": _home,
    "home (assessor)": _home,
    "collection:topics (organizer)": lambda built: reverse("collection:topics"),
    "collection:topic (organizer)": lambda built: reverse("collection:topic", args=[f"2024-{built.size}0"]),
    "collection:runs (organizer)": lambda built: reverse("collection:runs"),
    "collection:run (organizer)": lambda built: reverse("collection:run", args=[f"run{built.size}-0"]),
    "collection:leaderboards (organizer)": lambda built: reverse("collection:leaderboards"),
    "assignment:leaderboard (organizer)": lambda built: reverse("assignment:leaderboard"),
    "collection:support_leaderboard (organizer)": lambda built: reverse("collection:support_leaderboard"),
    "collection:upload (organizer)": lambda built: reverse("collection:upload"),
    "collection:upload_detail (organizer)": lambda built: reverse("collection:upload_detail", args=[built.upload.pk]),
    "accounts:list (organizer)": lambda built: reverse("accounts:list"),
}


# What a page's count may grow with, where the doc says so, counted independently of the page.
GROWTH: dict[str, Callable[[User], int]] = {
    "ARGUE-style work in the queue": lambda assessor: AssessorWork.objects.filter(
        assessor=assessor, kind=ARGUE_WORK
    ).count(),
}


def collection_build(size: int, queue: User) -> Built:
    """make_collection(size) (its assessor has a ManualAssign on each topic), a done upload, and `size` topics
    of their own on which `queue` has one work of every kind an app registers."""
    make_collection(size)
    _llm_output_plant(topic=Topic.objects.get(pk=f"2024-{size}0"))
    for i in range(size):
        topic = make_topic(f"queue-{size}-{i}", query=f"a topic of the queue {i}")
        for kind in registry.work_pages:
            AssessorWork.objects.create(topic=topic, assessor=queue, kind=kind)
    upload = Upload.objects.create(
        kind="run", file_name=f"run{size}.jsonl", size=1000, state=Upload.State.DONE, batch=make_batch()
    )
    return Built(size=size, organizer=User.objects.get(username="organizer"), assessor=queue, upload=upload)


def _llm_output_plant(*, topic: Topic) -> None:
    """An LLM's nugget list, assignment and support labels on the topic, the LLM assigner stale on one of its
    nuggets: the topic page marks such labels, and the run page and leaderboards list two more sources."""
    nugget_set = NuggetSet.objects.get(topic=topic)
    nuggets = list(nugget_set.nuggets.order_by("position"))
    plant_llm_output(topic=topic, nuggets=nuggets, answers=list(Answer.objects.filter(topic=topic)))
    LabelSource.objects.filter(family=CONDITIONS, name=LLM_ASSIGNER).update(
        kind=LabelSource.Kind.LLM, stale={nugget_set.name: {topic.pk: [nuggets[0].pk]}}
    )


def queries_of(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, f"{url}: {response.status_code}"
    return len(queries)


@dataclass(frozen=True)
class Measured:
    counts: dict[str, list[int]]  # a page's queries at each size
    units: dict[str, list[int]]  # each GROWTH unit's number at each size


@pytest.fixture(scope="module")
def measured(django_db_setup, django_db_blocker) -> Iterator["Measured"]:
    """Each page's query count on the small collection, then with the big one added."""
    counts: dict[str, list[int]] = {page: [] for page in PAGES}
    units: dict[str, list[int]] = {unit: [] for unit in GROWTH}
    with django_db_blocker.unblock():
        try:
            make_user(Role.ORGANIZER, username="organizer")
            queue = make_user(Role.ASSESSOR, username="queue")
            for size in SIZES:
                built = collection_build(size, queue)
                for page, url in PAGES.items():
                    client = Client()
                    client.force_login(built.assessor if page.endswith("(assessor)") else built.organizer)
                    client.get(url(built))  # a first request warms the caches a served process keeps
                    counts[page].append(queries_of(client, url(built)))
                for unit, counted in GROWTH.items():
                    units[unit].append(counted(built.assessor))
            yield Measured(counts=counts, units=units)
        finally:
            call_command("flush", interactive=False, verbosity=0)


ROWS = doc_rows()


def test_the_doc_gives_a_count_for_every_page_the_test_requests_and_no_other():
    assert sorted(row.key for row in ROWS) == sorted(PAGES)


@pytest.mark.parametrize("row", ROWS, ids=[row.key for row in ROWS])
def test_the_page_makes_the_queries_the_doc_says_at_both_sizes(row, measured):
    vendor = connection.vendor
    units = measured.units[row.figure.unit] if row.figure.unit else [0] * len(SIZES)
    expected = [row.figure.expected(vendor, n) for n in units]
    said = f"{row.figure.count[vendor]}" + (f" + {row.figure.per} per {row.figure.unit}" if row.figure.unit else "")
    assert measured.counts[row.key] == expected, (
        f"{row.key}: docs/pages.md says {said} on {vendor}, so {expected}; measured {measured.counts[row.key]} "
        f"with {SIZES[0]} topics and runs, then {SIZES[1]} more"
    )


def test_a_page_meant_to_be_constant_is_constant(measured):
    """Only a page the doc says grows may grow: the others make the same queries at both sizes."""
    grows = {row.key for row in ROWS if row.figure.per}
    varying = {page: n for page, n in measured.counts.items() if len(set(n)) > 1 and page not in grows}
    assert not varying, f"these pages' query counts grow with the collection: {varying}"
