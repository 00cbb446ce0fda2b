"""The meta-evaluation page and its downloads."""

import csv
import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessor.collection.kept_scores import scores_refresh
from assessor.work.roles import Role
from assignment.models import AssignmentLabel
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


def test_a_comparison_is_kept_until_either_source_changes(organizer_client, conditions):
    """The second view reads no label; a refreshed source (a new stamp) is computed again, with its new labels."""
    url = reverse("metaeval:index")
    first = organizer_client.get(url, QUERY)
    # Rows manual, columns auto, in the order not_support, partial_support, support (counted by hand).
    assert first.context["confusion"].counts == [[3, 4, 0], [1, 0, 0], [0, 1, 6]]
    with CaptureQueriesContext(connection) as queries:
        again = organizer_client.get(url, QUERY)
    assert not [q["sql"] for q in queries.captured_queries if AssignmentLabel._meta.db_table in q["sql"]]
    assert again.context["confusion"].counts == [[3, 4, 0], [1, 0, 0], [0, 1, 6]]
    # The same page from the comparison on (above it, the CSRF token differs from response to response).
    assert again.content.decode().split("<h2>Correlations", 1)[1] == first.content.decode().split("<h2>Correlations", 1)[1]

    # The manual label of r1's first nugget on t2 goes from support to not_support, as a write with its refresh.
    answer = conditions["answers"][("r1", "t2")]
    AssignmentLabel.objects.filter(assigner="manual", answer=answer, nugget__position=0).update(label="not_support")
    scores_refresh(family="conditions", columns=("auto_edit", "manual"), topics=["t2"])
    after = organizer_client.get(url, QUERY)
    assert after.context["confusion"].counts == [[3, 4, 1], [1, 0, 0], [0, 1, 5]]


def test_a_comparison_with_open_work_counted_is_never_kept(organizer_client, conditions):
    url = reverse("metaeval:index")
    for _ in range(2):
        with CaptureQueriesContext(connection) as queries:
            response = organizer_client.get(url, {**QUERY, "open": "1"})
        assert response.status_code == 200
        assert [q["sql"] for q in queries.captured_queries if AssignmentLabel._meta.db_table in q["sql"]]
