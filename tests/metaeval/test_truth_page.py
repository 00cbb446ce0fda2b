"""The page of a source against a truth leaderboard: its options, its tables, its JSON, its errors."""

import pytest
from django.urls import reverse

from assessor.work.roles import Role
from tests.builders import make_user
from tests.metaeval.truth_data import kiddie_leaderboards_import

pytestmark = pytest.mark.django_db


def test_the_page_shows_the_run_level_and_per_topic_figures_with_the_options_asked(organizer, tmp_path):
    kiddie_leaderboards_import(tmp_path)
    url = reverse("metaeval:truth")
    query = {"a": "scores:judged", "truth": "scores:kiddie-truth", "on_missing": "zero", "top_k": "3"}
    page = organizer.get(url, query).content.decode()
    assert 'id="truth-runs"' in page and 'id="truth-topics"' in page
    assert "Kendall over the truth&#x27;s top 3" in page or "Kendall over the truth's top 3" in page
    # run4 counts 0: tau (4 - 2) / 6 (tests/metaeval/test_truth_command.py works it by hand).
    assert "0.6667" in page
    assert "Truth runs the judged source lacks (counted 0): run4" in page
    assert "Judged runs the truth lacks (left out): run5" in page
    assert ">hibernation<" not in page  # the topics' rows are asked for
    assert ">hibernation<" in organizer.get(url, {**query, "per_topic": "1"}).content.decode()
    assert "format=json" in page  # the JSON download's link, with the query

    download = organizer.get(url, {**query, "format": "json"})
    assert download["Content-Type"] == "application/json"
    (pair,) = download.json()["pairs"]
    assert pair["kendall"] == pytest.approx(2 / 3) and pair["runs"] == 4 and download.json()["options"]["top_k"] == 3

    skip = organizer.get(url, {**query, "on_missing": "skip"}).content.decode()
    assert "Truth runs the judged source lacks (left out): run4" in skip and "0.3333" in skip


def test_the_page_says_what_is_wrong_with_the_query(organizer, tmp_path):
    kiddie_leaderboards_import(tmp_path)
    url = reverse("metaeval:truth")
    query = {"a": "scores:judged", "truth": "scores:kiddie-truth", "on_missing": "error"}
    error = organizer.get(url, query).content.decode()
    assert 'role="alert"' in error and "missing in the judged leaderboard: run4; missing in the truth: run5" in error
    bad_metric = organizer.get(url, {"a": "scores:judged", "truth": "scores:kiddie-truth", "metric": "JUDGE=X"})
    assert "has no metric &#x27;X&#x27;" in bad_metric.content.decode()
    assert organizer.get(reverse("metaeval:index")).content.decode().count(url) == 1


def test_an_assessor_cannot_reach_the_page(client):
    client.force_login(make_user(Role.ASSESSOR))
    assert client.get(reverse("metaeval:truth")).status_code in (302, 403)


def test_the_two_source_page_takes_the_top_k_of_b_when_asked(organizer, tmp_path):
    kiddie_leaderboards_import(tmp_path)
    query = {"a": "scores:judged", "b": "scores:kiddie-truth", "pairs": "JUDGE=RELEVANCE", "bootstrap": "0"}
    page = organizer.get(reverse("metaeval:index"), {**query, "top_k_of": "b", "top_k": "3"}).content.decode()
    assert "tau-b over the 3 runs b ranks first" in page
    assert '<option value="b" selected>' in page
    assert "runs a ranks first" in organizer.get(reverse("metaeval:index"), query).content.decode()
    bad = organizer.get(reverse("metaeval:index"), {**query, "top_k_of": "c"}).content.decode()
    assert "top_k_of must be a or b" in bad
