"""Agreement on ARGUE-style judgments (argue.agreement): two sources judgment by judgment, the meta-evaluation's
pooled matrix, and a support method of the TREC 2024 family read as yes/no."""

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from argue.agreement import argue_confusions, support_method_confusion
from argue.llm import argue_job_create
from assessor.jobs.engine import job_run_sync
from metaeval.comparison import comparison_build
from tests.builders import make_support_label

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_judges(two_llm_endpoints, argue_collection):
    """alpha's judgments ("llm") and the flipped model's ("flip"), which says the opposite every time."""
    job_run_sync(argue_job_create(name="llm", bank="gold", endpoint="alpha").pk)
    job_run_sync(argue_job_create(name="flip", bank="gold", endpoint="beta").pk)
    return argue_collection


def test_two_sources_that_disagree_on_every_judgment(two_judges):
    confusions = argue_confusions("llm", "flip")
    # citations: alpha yes on d1, d2, d4 and no on d3; the flipped model the opposite
    assert confusions["support"].counts == [[0, 3], [1, 0]]
    # gold answers: alpha yes on Ann, May, Bob, purr and no on June
    assert confusions["answers"].counts == [[0, 4], [1, 0]]
    # kappa of [[0, 3], [1, 0]]: p_o = 0, p_e = (3 * 1 + 1 * 3) / 16
    assert confusions["support"].kappa == pytest.approx((0 - 6 / 16) / (1 - 6 / 16))
    assert confusions["support"].missing_a == confusions["support"].missing_b == 0


def test_the_meta_evaluation_pools_both_judgments(two_judges):
    comparison = comparison_build("argue:llm", "argue:flip")
    confusion = comparison.confusion
    assert confusion is not None and confusion.labels == ["yes", "no"]
    # The two leaderboards compare metric by metric too (the runs' correlations).
    assert [tau.metric for tau in comparison.taus][:3] == ["f1", "weighted_f1", "nugget_coverage"]
    assert confusion.counts == [[0, 7], [2, 0]]
    out = StringIO()
    call_command("argue_agreement", "--a", "llm", "--b", "flip", stdout=out)
    assert "citation support: 4 judged by both" in out.getvalue() and "gold answers: 5 judged by both" in out.getvalue()


def test_a_support_method_read_as_yes_no_against_the_attestations(two_judges):
    collection = two_judges
    make_support_label(collection.a_t1, 0, 2, method="nist")  # FS on d1 (alpha: yes)
    make_support_label(collection.a_t1, 1, 1, method="nist")  # PS on d2 (alpha: yes)
    make_support_label(collection.a_t2, 0, 0, method="nist")  # NS on d4 (alpha: yes)
    assert support_method_confusion(method="nist", name="llm").counts == [[1, 0], [2, 0]]
    assert support_method_confusion(method="nist", name="llm", mapping="fs_ps").counts == [[2, 0], [1, 0]]
    # d3 is not a first citation: only the ARGUE-style source judged it
    assert support_method_confusion(method="nist", name="llm").missing_a == 1
    out = StringIO()
    call_command("argue_agreement", "--a", "llm", "--support", "nist", "--mapping", "fs_ps", stdout=out)
    assert "support (nist as yes/no by fs_ps): 3 judged by both" in out.getvalue()


def test_the_meta_evaluation_compares_a_support_method_with_the_attestations(two_judges, organizer):
    collection = two_judges
    make_support_label(collection.a_t1, 0, 2, method="nist")  # FS on d1 (alpha: yes)
    make_support_label(collection.a_t1, 1, 1, method="nist")  # PS on d2 (alpha: yes)
    make_support_label(collection.a_t2, 0, 0, method="nist")  # NS on d4 (alpha: yes)
    # Rows the first source: nist read as yes/no against alpha's yes on all three; alpha judged d3 too.
    expected = {
        ("support:nist", "argue:llm", False): [[1, 0], [2, 0]],
        ("support:nist", "argue:llm", True): [[2, 0], [1, 0]],
        ("argue:llm", "support:nist", False): [[1, 2], [0, 0]],
        ("argue:llm", "support:nist", True): [[2, 1], [0, 0]],
    }
    for (a, b, partial_yes), counts in expected.items():
        confusion = comparison_build(a, b, scores=False, partial_yes=partial_yes).confusion
        assert confusion is not None and confusion.labels == ["yes", "no"]
        assert confusion.counts == counts
        only_argue = (confusion.missing_a, confusion.missing_b)
        assert only_argue == ((1, 0) if a == "support:nist" else (0, 1))
    page = organizer.get(reverse("metaeval:index"), {"a": "support:nist", "b": "argue:llm", "partial": "yes"})
    text = page.content.decode()
    assert page.status_code == 200 and "FS and PS are yes, NS is no" in text
    cells = re.findall(r'<td class="cell[^"]*"[^>]*>(\d+)<span>', text)
    assert cells == ["2", "0", "1", "0"]
    # No metric in common, and none paired: the matrix alone, no tau.
    assert "The two sources have no metric in common." in text
    for flags, counts in (([], [[1, 0], [2, 0]]), (["--partial-support-yes"], [[2, 0], [1, 0]])):
        out = StringIO()
        call_command("metaeval", "--a", "support:nist", "--b", "argue:llm", "--json", *flags, stdout=out)
        printed = json.loads(out.getvalue())
        assert printed["confusion"]["counts"] == counts and printed["metrics"] == {}
