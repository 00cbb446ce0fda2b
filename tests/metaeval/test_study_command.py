"""The study command: making a study from the command line, and printing its report."""

import io

import pytest
from django.core.management import CommandError, call_command

from metaeval.models import Study
from tests.builders import make_support_label

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("study", *args, stdout=out)
    return out.getvalue()


def test_it_makes_a_study_and_prints_the_kappa_of_the_two_sources(scenario):
    # a: FS FS NS, b: NS PS FS on three pairs: no agreement; marginals a 2 FS 1 NS, b 1 NS 1 PS 1 FS:
    # p_e = (1*1 + 0*1 + 2*1) / 9 = 1/3, kappa = (0 - 1/3) / (2/3) = -0.5.
    for answer, a, b in [(0, 2, 0), (1, 2, 1), (2, 0, 2)]:
        make_support_label(scenario.answers[answer], 0, a, method="nist-a")
        make_support_label(scenario.answers[answer], 0, b, method="nist-b")
    username = scenario.assessor.username
    output = run(
        "--name", "cli", "--a", "support:nist-a", "--b", "support:nist-b", "--seed", "4", "--assessor", username
    )
    assert "study cli: 3 items on 1 topics" in output
    assert "-0.500" in output.splitlines()[4]
    study = Study.objects.get(name="cli")
    assert (study.k, study.seed, study.assessor) == (15, 4, scenario.assessor)
    assert "not submitted (not counted)" in run("--name", "cli", "--show")


def test_it_says_what_is_missing(scenario):
    with pytest.raises(CommandError, match="--a, --b, --seed, --assessor"):
        run("--name", "cli")
    with pytest.raises(CommandError, match="one family"):
        run("--name", "cli", "--a", "support:x", "--b", "assignment:y", "--seed", "1", "--assessor", "nobody")
    with pytest.raises(CommandError, match="no study named"):
        run("--name", "unknown", "--show")
