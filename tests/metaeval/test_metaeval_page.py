"""The meta-evaluation page and its downloads."""

import csv
import html
import io
import re
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from assessor.models import KeptAnswerScore, KeptSource
from assessor.project.celery import app as celery_app
from assessor.scoring.kept import scores_refresh
from assessor.work.roles import Role
from assignment.models import AssignmentLabel
from metaeval.comparison_page import WARM_VIEWED_DAYS, WORKER_PATIENCE, comparison_compute, comparisons_warm
from metaeval.models import KeptComparison
from tests.builders import make_user

pytestmark = pytest.mark.django_db

QUERY = {"a": "auto_edit/manual", "b": "auto_edit/auto", "metric": "Vstrict"}


def test_the_page_renders_taus_matrix_table_and_plots_for_an_organizer(organizer_client, conditions):
    response = organizer_client.get(reverse("metaeval:index"), QUERY)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Kendall&#x27;s tau" in page or "Kendall's tau" in page
    for metric in ("A", "Vstrict", "Wstrict", "L"):
        assert f">{metric}</a>" in page
    # The confusion matrix (3 not_support/not_support pairs, 6 support/support) and kappa.
    assert "Cohen" in page and ">3<span>" in page and ">6<span>" in page
    assert "words / nugget" in page and "% partial support" in page
    assert reverse("metaeval:plot_run") in page and reverse("metaeval:plot_pairs") in page
    assert "auto_edit/manual" in page


def test_the_page_lists_sources_before_a_choice(organizer_client, conditions):
    response = organizer_client.get(reverse("metaeval:index"))
    assert response.status_code == 200
    assert "auto_edit/auto" in response.content.decode()


def test_an_htmx_request_gets_the_fragment_only(organizer_client, conditions):
    response = organizer_client.get(reverse("metaeval:index"), QUERY, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "<html" not in response.content.decode() and "Confusion matrix" in response.content.decode()


def test_an_unknown_source_shows_a_clear_error(organizer_client, conditions):
    response = organizer_client.get(reverse("metaeval:index"), {"a": "nope/nobody", "b": "auto_edit/auto"})
    assert response.status_code == 200
    assert "unknown source &#x27;nope/nobody&#x27;" in response.content.decode()
    for name in ("metaeval:taus_csv", "metaeval:confusion_csv", "metaeval:describe_csv", "metaeval:plot_run"):
        download = organizer_client.get(reverse(name), {"a": "nope/nobody", "b": "auto_edit/auto"})
        assert download.status_code == 400
        assert "unknown source 'nope/nobody'" in download.content.decode()


@pytest.mark.parametrize("role", [Role.ASSESSOR])
def test_the_page_and_downloads_are_forbidden_to_an_assessor(client, role, conditions):
    client.force_login(make_user(role))
    for name in ("metaeval:index", "metaeval:taus_csv", "metaeval:plot_run", "metaeval:confusion_csv"):
        assert client.get(reverse(name), QUERY).status_code == 403


def test_an_anonymous_visitor_is_sent_to_log_in(client):
    response = client.get(reverse("metaeval:index"))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_plots_are_png_images_and_downloadable(organizer_client, conditions):
    for name in ("metaeval:plot_run", "metaeval:plot_pairs"):
        response = organizer_client.get(reverse(name), QUERY)
        assert response.status_code == 200
        assert response["Content-Type"] == "image/png"
        assert response.content.startswith(b"\x89PNG\r\n\x1a\n")
        saved = organizer_client.get(reverse(name), {**QUERY, "download": "1"})
        assert saved["Content-Disposition"].startswith("attachment;") and ".png" in saved["Content-Disposition"]


def _csv_rows(response) -> list[list[str]]:
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith("attachment;")
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_csv_downloads_of_taus_matrix_table_and_scores(organizer_client, conditions):
    taus = _csv_rows(organizer_client.get(reverse("metaeval:taus_csv"), QUERY))
    assert taus[0][:6] == ["a", "b", "metric", "tau_run", "tau_topic_avg", "tau_all"]
    assert [row[2] for row in taus[1:]] == ["A", "Astrict", "V", "Vstrict", "W", "Wstrict", "L"]
    matrix = _csv_rows(organizer_client.get(reverse("metaeval:confusion_csv"), QUERY))
    assert matrix[1] == ["not_support", "3", "4", "0", "7"]
    assert matrix[3] == ["support", "0", "1", "6", "7"]
    table = _csv_rows(organizer_client.get(reverse("metaeval:describe_csv"), QUERY))
    assert table[0][:3] == ["source", "topics", "avg_nuggets"]
    assert [row[0] for row in table[1:]] == ["auto_edit/manual", "auto_edit/auto"]
    points = _csv_rows(organizer_client.get(reverse("metaeval:points_csv"), QUERY))
    assert sum(row[0] == "run" for row in points) == 3 and sum(row[0] == "pair" for row in points) == 6


def test_support_methods_compare_on_the_page(organizer_client, support_methods):
    response = organizer_client.get(reverse("metaeval:index"), {"a": "support:scratch", "b": "support:auto"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "weighted_precision" in page and ">FS</th>" in page


@pytest.fixture
def no_cache():
    """The process's cache (plots, the warm-up's flag) empty: each test sees only what it made."""
    cache.clear()
    yield
    cache.clear()


def _label_reads(queries) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if AssignmentLabel._meta.db_table in q["sql"]]


def _t2_label_changed(conditions) -> None:
    """The manual label of r1's first nugget on t2 goes from support to not_support, as a write with its refresh."""
    answer = conditions["answers"][("r1", "t2")]
    AssignmentLabel.objects.filter(assigner="manual", answer=answer, nugget__position=0).update(label="not_support")
    scores_refresh(family="conditions", columns=("auto_edit", "manual"), topics=["t2"])


# Rows manual, columns auto, in the order not_support, partial_support, support (counted by hand).
BEFORE = [[3, 4, 0], [1, 0, 0], [0, 1, 6]]
AFTER = [[3, 4, 1], [1, 0, 0], [0, 1, 5]]  # one support/support pair became not_support/support


def test_a_comparison_is_kept_and_shown_again_without_reading_a_label(organizer_client, conditions, no_cache):
    url = reverse("metaeval:index")
    first = organizer_client.get(url, QUERY)
    assert first.context["confusion"].counts == BEFORE
    with CaptureQueriesContext(connection) as queries:
        again = organizer_client.get(url, QUERY)
    assert not _label_reads(queries)
    assert again.context["confusion"].counts == BEFORE
    # The same page from the comparison on (above it, the CSRF token differs from response to response).
    assert again.content.decode().split("<h2>Correlations", 1)[1] == first.content.decode().split("<h2>Correlations", 1)[1]
    assert 'id="computed"' in again.content.decode() and 'id="stale"' not in again.content.decode()


def test_a_changed_source_shows_the_kept_figures_as_stale_until_a_worker_computes_them(
    organizer_client, conditions, no_cache, django_capture_on_commit_callbacks
):
    url = reverse("metaeval:index")
    organizer_client.get(url, QUERY)
    _t2_label_changed(conditions)

    with django_capture_on_commit_callbacks() as asked, CaptureQueriesContext(connection) as queries:
        stale = organizer_client.get(url, QUERY)
    assert not _label_reads(queries)  # shown at once, from what was kept
    page = stale.content.decode()
    assert stale.context["confusion"].counts == BEFORE
    assert 'id="stale"' in page and "before the latest change to <code>auto_edit/manual</code>" in page
    assert 'hx-trigger="load delay:3s"' in page  # the page asks again until the new figures are there
    assert len(asked) == 1  # the worker's task, queued once the view's transaction commits
    with django_capture_on_commit_callbacks() as asked_again:
        organizer_client.get(url, QUERY, headers={"HX-Request": "true"})
    assert not asked_again  # a page already asked for is not asked again

    [kept] = KeptComparison.objects.all()
    assert comparison_compute(kept.key) is True
    assert comparison_compute(kept.key) is False  # a second delivery finds it current
    fresh = organizer_client.get(url, QUERY)
    assert fresh.context["confusion"].counts == AFTER
    assert 'id="stale"' not in fresh.content.decode()


def test_the_queued_task_computes_the_page_through_celery(
    organizer_client, conditions, no_cache, django_capture_on_commit_callbacks
):
    url = reverse("metaeval:index")
    organizer_client.get(url, QUERY)
    _t2_label_changed(conditions)
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            organizer_client.get(url, QUERY)
    finally:
        celery_app.conf.task_always_eager = eager
    assert organizer_client.get(url, QUERY).context["confusion"].counts == AFTER


def test_a_source_refresh_brings_the_comparisons_viewed_lately_up_to_date_in_a_worker(
    organizer_client, conditions, no_cache, django_capture_on_commit_callbacks
):
    url = reverse("metaeval:index")
    organizer_client.get(url, QUERY)
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True) as heard:
            _t2_label_changed(conditions)
            scores_refresh(family="conditions", columns=("auto_edit", "manual"), topics=["t1"])
    finally:
        celery_app.conf.task_always_eager = eager
    assert len(heard) == 2  # the listener, after the commit, for each refresh
    with CaptureQueriesContext(connection) as queries:
        response = organizer_client.get(url, QUERY)
    assert not _label_reads(queries)  # current: the warm-up computed it
    assert response.context["confusion"].counts == AFTER and 'id="stale"' not in response.content.decode()


def test_comparisons_viewed_long_ago_are_left_to_their_next_view(organizer_client, conditions, no_cache):
    url = reverse("metaeval:index")
    organizer_client.get(url, QUERY)
    organizer_client.get(url, {**QUERY, "metric": "A"})
    KeptComparison.objects.filter(query__metric="A").update(
        viewed_at=timezone.now() - timedelta(days=WARM_VIEWED_DAYS, hours=1)
    )
    _t2_label_changed(conditions)
    assert comparisons_warm() == 1
    old = KeptComparison.objects.get(query__metric="A")
    assert old.computed_at < KeptComparison.objects.get(query__metric="Vstrict").computed_at


def test_a_warm_up_computes_the_latest_viewed_comparisons_only(organizer_client, conditions, no_cache, monkeypatch):
    monkeypatch.setattr("metaeval.comparison_page.WARM_AT_MOST", 2)
    url = reverse("metaeval:index")
    for minutes, metric in enumerate(["A", "V", "W"]):
        organizer_client.get(url, {**QUERY, "metric": metric})
        KeptComparison.objects.filter(query__metric=metric).update(
            viewed_at=timezone.now() - timedelta(minutes=10 - minutes)
        )
    before = dict(KeptComparison.objects.values_list("query__metric", "computed_at"))
    _t2_label_changed(conditions)
    assert comparisons_warm() == 2
    after = dict(KeptComparison.objects.values_list("query__metric", "computed_at"))
    assert after["A"] == before["A"]  # viewed first, longest ago: left to its next view
    assert after["V"] > before["V"] and after["W"] > before["W"]


def test_a_stale_page_no_worker_took_offers_to_compute_it_here(organizer_client, conditions, no_cache):
    url = reverse("metaeval:index")
    organizer_client.get(url, QUERY)
    _t2_label_changed(conditions)
    organizer_client.get(url, QUERY)  # asks a worker; none runs here
    KeptComparison.objects.update(queued_at=timezone.now() - WORKER_PATIENCE - timedelta(seconds=1))
    page = organizer_client.get(url, QUERY).content.decode()
    assert "No worker has computed them again" in page and "here=1" in page
    assert "hx-trigger" not in page.split('id="stale"', 1)[1].split(">", 1)[0]  # no more asking
    here = organizer_client.get(url, {**QUERY, "here": "1"})
    assert here.context["confusion"].counts == AFTER
    assert organizer_client.get(url, QUERY).context["confusion"].counts == AFTER  # and kept


def test_the_plots_of_a_kept_page_are_drawn_from_its_points_in_any_process(organizer_client, conditions, no_cache):
    organizer_client.get(reverse("metaeval:index"), QUERY)
    cache.clear()  # as in another web process
    page = organizer_client.get(reverse("metaeval:index"), QUERY).content.decode()
    image = html.unescape(re.search(r'<img src="([^"]*plot-run[^"]*)"', page)[1])
    assert "kept=" in image
    with CaptureQueriesContext(connection) as queries:
        response = organizer_client.get(image)
    assert response.status_code == 200 and response.content.startswith(b"\x89PNG")
    assert not [q for q in queries.captured_queries if KeptAnswerScore._meta.db_table in q["sql"]]
    # The same image without the kept page's name is drawn from the scores.
    with CaptureQueriesContext(connection) as queries:
        organizer_client.get(image.split("&kept=")[0])
    assert [q for q in queries.captured_queries if KeptAnswerScore._meta.db_table in q["sql"]]


def test_a_kept_page_that_cannot_be_read_is_computed_again(organizer_client, conditions, no_cache):
    url = reverse("metaeval:index")
    organizer_client.get(url, QUERY)
    KeptComparison.objects.update(page=b"not a pickle")
    response = organizer_client.get(url, QUERY)
    assert response.context["confusion"].counts == BEFORE
    assert bytes(KeptComparison.objects.get().page).startswith(b"\x80")  # kept again, as a pickle


def test_a_kept_comparison_of_a_source_gone_is_dropped_by_the_worker(organizer_client, conditions, no_cache):
    organizer_client.get(reverse("metaeval:index"), QUERY)
    [kept] = KeptComparison.objects.all()
    KeptSource.objects.filter(name="auto_edit/auto").delete()
    assert comparison_compute(kept.key) is False
    assert not KeptComparison.objects.exists()


@pytest.fixture
def large(monkeypatch):
    """Every comparison counts as large: its first computation is a worker's too."""
    monkeypatch.setattr("metaeval.comparison_page.INLINE_ANSWERS_AT_MOST", 0)


def test_a_large_comparison_is_computed_by_a_worker_the_first_time_too(
    organizer_client, conditions, no_cache, large, django_capture_on_commit_callbacks
):
    url = reverse("metaeval:index")
    with django_capture_on_commit_callbacks() as asked, CaptureQueriesContext(connection) as queries:
        pending = organizer_client.get(url, QUERY)
    assert not _label_reads(queries)
    page = pending.content.decode()
    assert 'id="pending"' in page and "A worker is computing this comparison" in page
    assert 'hx-trigger="load delay:3s"' in page and "Confusion matrix" not in page
    assert len(asked) == 1
    with django_capture_on_commit_callbacks() as asked_again:
        organizer_client.get(url, QUERY, headers={"HX-Request": "true"})
    assert not asked_again

    [kept] = KeptComparison.objects.all()
    assert comparison_compute(kept.key) is True
    shown = organizer_client.get(url, QUERY)
    assert shown.context["confusion"].counts == BEFORE
    assert 'id="pending"' not in shown.content.decode() and 'id="computed"' in shown.content.decode()


def test_a_large_comparison_no_worker_took_offers_to_compute_it_here(organizer_client, conditions, no_cache, large):
    url = reverse("metaeval:index")
    organizer_client.get(url, QUERY)
    KeptComparison.objects.update(queued_at=timezone.now() - WORKER_PATIENCE - timedelta(seconds=1))
    page = organizer_client.get(url, QUERY).content.decode()
    assert "No worker has computed this comparison" in page and "here=1" in page
    assert organizer_client.get(url, {**QUERY, "here": "1"}).context["confusion"].counts == BEFORE


def test_what_the_worker_finds_wrong_with_a_query_is_shown_until_a_source_changes(
    organizer_client, conditions, no_cache, large, django_capture_on_commit_callbacks
):
    url = reverse("metaeval:index")
    wrong = {**QUERY, "top_k": "1"}
    organizer_client.get(url, wrong)
    [kept] = KeptComparison.objects.all()
    assert comparison_compute(kept.key) is True
    with django_capture_on_commit_callbacks() as asked:
        page = organizer_client.get(url, wrong).content.decode()
    assert "top_k must be from 2 to 1000" in page and not asked  # not asked for again
    _t2_label_changed(conditions)
    with django_capture_on_commit_callbacks() as asked:
        page = organizer_client.get(url, wrong).content.decode()
    assert 'id="pending"' in page and len(asked) == 1


def test_a_comparison_with_open_work_counted_is_never_kept(organizer_client, conditions):
    url = reverse("metaeval:index")
    for _ in range(2):
        with CaptureQueriesContext(connection) as queries:
            response = organizer_client.get(url, {**QUERY, "open": "1"})
        assert response.status_code == 200
        assert [q["sql"] for q in queries.captured_queries if AssignmentLabel._meta.db_table in q["sql"]]
