"""The judging benchmark runs, prints its table with fixed query counts, and leaves nothing behind."""

from io import StringIO

import pytest
from django.core.management import call_command

from assessor.models import AssessorWork, Topic
from support.models import SupportLabel

pytestmark = pytest.mark.django_db


def test_the_benchmark_prints_times_and_fixed_query_counts():
    out = StringIO()
    call_command("bench_judging", "--answers", "8", "--sentences", "6", "--nuggets", "7", "--repeat", "2", stdout=out)
    text = out.getvalue()
    print(text)
    for request in ("assign page", "assign label save", "support page (scratch)", "support page (postedit)",
                    "support label save", "organizer: assign", "organizer: support"):
        assert request in text
    assert "query count independent of the topic's size: yes" in text
    assert not Topic.objects.exists() and not AssessorWork.objects.exists() and not SupportLabel.objects.exists()
