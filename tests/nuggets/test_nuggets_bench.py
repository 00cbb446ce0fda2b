"""The workspace benchmark runs, prints its table, and leaves nothing behind."""

from io import StringIO

import pytest
from django.core.management import call_command

from assessor.models import Topic
from nuggets.models import NuggetSet

pytestmark = pytest.mark.django_db


def test_the_benchmark_prints_times_and_fixed_query_counts():
    out = StringIO()
    call_command("bench_workspace", "--nuggets", "8", "--segments", "12", "--repeat", "2", stdout=out)
    text = out.getvalue()
    for request in ("workspace page", "edit text", "set importance", "move", "heartbeat"):
        assert request in text
    assert "query count independent of the topic's size: yes" in text
    assert not Topic.objects.exists() and not NuggetSet.objects.exists()
