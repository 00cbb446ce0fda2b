"""A kept comparison in the browser: shown at once when a source changed, marked stale, and replaced by the
new figures when the worker has computed them, without a reload."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from assessor.scoring.kept import scores_refresh
from assessor.work.roles import Role
from assignment.models import AssignmentLabel
from metaeval.comparison_page import comparison_compute
from metaeval.models import KeptComparison
from tests.builders import make_user
from tests.metaeval.builders import build_conditions

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUERY = "?a=auto_edit/manual&b=auto_edit/auto&metric=Vstrict"


class Queued:
    """The Celery tasks the page and the refreshes queue, left for the test to run as the worker."""

    def __init__(self) -> None:
        self.sent: list[tuple] = []

    def apply_async(self, args=(), **options) -> None:
        self.sent.append(tuple(args))


def test_a_stale_comparison_gives_way_to_the_new_figures_when_the_worker_is_done(open_as, monkeypatch):
    queued = Queued()
    monkeypatch.setattr("metaeval.comparison_page.celery_task", lambda name: queued)
    cache.clear()
    conditions = build_conditions()
    page = open_as(make_user(Role.ORGANIZER), reverse("metaeval:index") + QUERY)
    # Rows manual, columns auto: 6 pairs both call support (counted by hand).
    support_cell = page.locator("table.confusion tbody tr").nth(2).locator("td.cell").nth(2)

    def support_pairs() -> str:  # the count, without the percentage beneath it (the cell may be a link)
        return support_cell.evaluate(
            "cell => (cell.querySelector('a.cell-items') || cell).firstChild.textContent.trim()"
        )

    assert support_pairs() == "6"
    expect(page.locator("#computed")).to_be_visible()

    # The manual label of r1's first nugget on t2 goes from support to not_support, with its refresh.
    answer = conditions["answers"][("r1", "t2")]
    AssignmentLabel.objects.filter(assigner="manual", answer=answer, nugget__position=0).update(label="not_support")
    scores_refresh(family="conditions", columns=("auto_edit", "manual"), topics=["t2"])
    page.reload()
    stale = page.locator("#stale")
    expect(stale).to_contain_text("before the latest change to auto_edit/manual")
    assert support_pairs() == "6"  # the kept figures, at once

    # The worker's part, while the page asks again every few seconds.
    [key] = KeptComparison.objects.values_list("key", flat=True)
    assert (key,) in queued.sent
    assert comparison_compute(key)
    expect(stale).to_have_count(0)
    assert support_pairs() == "5"
    expect(page.locator("#computed")).to_be_visible()
