"""Two sources without a metric in common: said plainly on the page, through htmx and on the command line."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.work.roles import Role
from metaeval.models import ImportedScore, ScoreTable
from tests.builders import make_batch, make_user

pytestmark = pytest.mark.django_db


def score_table(name: str, metric: str) -> None:
    table = ScoreTable.objects.create(name=name, imported_from=make_batch())
    for run_id, value in (("run-a", 0.5), ("run-b", 0.25), ("run-c", 0.75)):
        ImportedScore.objects.create(table=table, run_id=run_id, topic_id="t1", metric=metric, value=value)


def test_sources_without_a_shared_metric_are_explained_not_a_server_error(client):
    score_table("nuggets", "Vstrict")
    score_table("support", "weighted_precision")
    client.force_login(make_user(Role.ORGANIZER))
    query = {"a": "scores:nuggets", "b": "scores:support"}
    for headers in ({}, {"HX-Request": "true"}):
        response = client.get(reverse("metaeval:index"), query, headers=headers)
        page = response.content.decode()
        assert response.status_code == 200
        assert "share no metric" in page and "Vstrict" in page and "weighted_precision" in page
        # The metric selector offers nothing to choose, not every metric there is.
        selector = page.split('id="metaeval-metric"')[1].split("</select>")[0]
        assert selector.count("<option") == 1 and "no metric in common" in selector and "disabled" in selector
    with pytest.raises(CommandError, match="share no metric"):
        call_command("metaeval", "--a", "scores:nuggets", "--b", "scores:support")
