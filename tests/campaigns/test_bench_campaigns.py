"""bench_campaigns at a tiny size: it builds its campaigns side by side and prints the same query counts for
a campaign's pages whether it is alone in the database or has two others beside it."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from assessor.models import Answer, Campaign, Citation, Job, Qrel, Run, Topic

pytestmark = pytest.mark.django_db

PAGES = ("home", "topics", "runs", "topic", "run", "leaderboards", "jobs")


def _table(printed: str) -> dict[str, list[str]]:
    return {
        line.split()[0]: line.split()[1:] for line in printed.splitlines() if line.split()[:1] in [[p] for p in PAGES]
    }


def test_it_times_the_pages_of_three_tiny_campaigns_with_the_query_counts_of_one():
    out = io.StringIO()
    arguments = ["--topics", "3", "--runs", "2", "--sentences", "2", "--jobs", "2", "--repeat", "1", "--in-place"]
    call_command("bench_campaigns", *arguments, stdout=out)
    printed = out.getvalue()

    # Three campaigns, each with 3 topics, 2 runs answering every topic, 20 qrels a topic and 2 jobs.
    assert Campaign.objects.count() == 3
    for campaign in Campaign.objects.all():
        assert Topic.objects.unscoped().filter(campaign=campaign).count() == 3
        assert Run.objects.unscoped().filter(campaign=campaign).count() == 2
        assert Answer.objects.filter(run__campaign=campaign, topic__campaign=campaign).count() == 6
        assert Qrel.objects.filter(topic__campaign=campaign).count() == 60
        assert Job.objects.unscoped().filter(campaign=campaign).count() == 2
    # The same run and topic ids in each (the topics' keys differ by campaign).
    assert set(Run.objects.unscoped().values_list("run_id", flat=True)) == {"bench_run_001", "bench_run_002"}
    assert Topic.objects.unscoped().filter(pk__endswith="@bench-3").count() == 3
    assert Citation.objects.exists()

    rows = _table(printed)
    assert set(rows) == set(PAGES)
    for page, columns in rows.items():
        # median, p95, cpu, queries (3 campaigns), queries (1 campaign), median and cpu (1 campaign), median (the
        # last campaign)
        assert len(columns) in (8, 10), page  # "over target" may follow
        assert int(columns[3]) == int(columns[4]) > 0, page
    assert "query counts unchanged from one campaign: yes" in printed


def test_it_refuses_a_database_that_holds_topics():
    Topic.objects.create(id="2024-1", query="q")
    with pytest.raises(CommandError, match="already holds topics"):
        call_command("bench_campaigns", "--topics", "1", "--runs", "1", "--in-place", stdout=io.StringIO())
