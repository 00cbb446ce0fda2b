"""Calibrated estimates (prediction-powered inference), checked against hand computations."""

import io
import math

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor.work.roles import Role
from metaeval.calibration import LLM_LIKE_CONFUSION, calibration_build, llm_like_scores
from metaeval.ppi import Z_95, ppi_estimates, ppi_simulate, topic_sample
from tests.builders import make_user


def test_an_estimate_and_its_interval_by_hand():
    llm = {("r", "t1"): 0.5, ("r", "t2"): 0.5, ("r", "t3"): 1.0, ("r", "t4"): 0.0}
    human = {("r", "t1"): 1.0, ("r", "t3"): 0.5}
    (estimate,) = ppi_estimates(llm=llm, human=human, runs=["r"], topics=["t1", "t2", "t3", "t4"], sample=["t1", "t3"])
    # LLM mean 0.5; differences on the sample +0.5 and -0.5: no correction.
    assert (estimate.llm_mean, estimate.correction, estimate.estimate) == (0.5, 0.0, 0.5)
    # var(x) = 0.5 / 3 over N = 4, var(d) = 0.5 over n = 2.
    half = Z_95 * math.sqrt((0.5 / 3) / 4 + 0.5 / 2)
    assert estimate.low == pytest.approx(0.5 - half) and estimate.high == pytest.approx(0.5 + half)
    assert half == pytest.approx(1.0585, abs=1e-4)


def test_a_topic_a_run_did_not_answer_counts_zero_on_both_sides():
    llm = {("a", "t1"): 1.0, ("b", "t1"): 1.0, ("b", "t2"): 1.0}
    human = {("a", "t1"): 0.5, ("b", "t1"): 0.5, ("b", "t2"): 0.5}
    estimates = {
        e.run_id: e
        for e in ppi_estimates(llm=llm, human=human, runs=["a", "b"], topics=["t1", "t2"], sample=["t1", "t2"])
    }
    # Run a: x = [1, 0], d = [-0.5, 0]: 0.5 - 0.25. Run b: x = [1, 1], d = [-0.5, -0.5]: 0.5.
    assert estimates["a"].estimate == pytest.approx(0.25) and estimates["b"].estimate == pytest.approx(0.5)


def test_the_sample_comes_from_the_topics():
    with pytest.raises(ValueError, match="drawn from the topics"):
        ppi_estimates(llm={}, human={}, runs=["r"], topics=["t1"], sample=["t9"])
    assert topic_sample([f"t{i}" for i in range(20)], fraction=0.1, seed=3) == topic_sample(
        [f"t{i}" for i in range(20)], fraction=0.1, seed=3
    )
    assert len(topic_sample(["a", "b", "c"], fraction=0.01, seed=0)) == 2  # a variance needs two


def test_an_llm_that_agrees_with_people_is_recovered_exactly():
    scores = {(f"r{r}", f"t{t}"): ((r * 7 + t * 3) % 10) / 10 for r in range(6) for t in range(12)}
    simulation = ppi_simulate(
        llm=scores, human=scores, runs=[f"r{r}" for r in range(6)], topics=[f"t{t}" for t in range(12)],
        fractions=[0.25], seeds=range(5),
    )  # fmt: skip
    row = simulation.rows[0]
    assert (simulation.tau_llm_only, row.tau_mean, row.coverage, row.error) == (1.0, 1.0, 1.0, 0.0)


@pytest.mark.django_db
def test_calibration_over_stored_conditions_by_hand(conditions):
    result = calibration_build(llm="auto_edit/auto", human="auto_edit/manual", metric="A")
    estimates = {e.run_id: e for e in result.estimates}
    # Every topic judged: the estimate is the human mean. r2: AutoAssign A = 0.5 and 0.75, ManualAssign 1/3 and 0.5.
    assert estimates["r2"].llm_mean == pytest.approx(0.625)
    assert estimates["r2"].estimate == pytest.approx(5 / 12) == result.human_means["r2"]
    half = Z_95 * math.sqrt(0.03125 / 2 + (2 * (1 / 24) ** 2) / 2)
    assert estimates["r2"].high - estimates["r2"].estimate == pytest.approx(half)
    assert [e.run_id for e in result.estimates] == ["r1", "r2", "r3"]  # 5/6, 5/12, 7/24


@pytest.mark.django_db
def test_the_page_shows_estimates_and_intervals(client, conditions):
    client.force_login(make_user(Role.ORGANIZER))
    page = client.get(
        reverse("metaeval:calibrate"), {"llm": "auto_edit/auto", "human": "auto_edit/manual", "metric": "A"}
    ).content.decode()
    row = page.split('<td class="mono">r2</td>')[1].split("</tr>")[0]
    assert "0.4167" in row and "0.1584 – 0.6749" in row and "0.6250" in row
    assert "3 of 3 intervals hold them" in page
    bad = client.get(reverse("metaeval:calibrate"), {"llm": "auto_edit/auto", "human": "nope/nope", "metric": "A"})
    assert "unknown source" in bad.content.decode()


@pytest.mark.django_db
def test_an_llm_like_copy_follows_the_confusion_pattern(conditions):
    identity = {label: {label: 1.0} for label in LLM_LIKE_CONFUSION}
    copy = llm_like_scores(nuggets="auto_edit", assigner="manual", seed=0, confusion=identity)
    # With the identity, the copy scores exactly as the labels it copies.
    assert copy.run_means["r2"]["A"] == pytest.approx(5 / 12)
    everything_partial = {label: {"partial_support": 1.0} for label in LLM_LIKE_CONFUSION}
    partial = llm_like_scores(nuggets="auto_edit", assigner="manual", seed=0, confusion=everything_partial)
    assert {means["A"] for means in partial.run_means.values()} == {0.5}


@pytest.mark.django_db
def test_the_command_prints_the_estimates_and_the_simulation(conditions):
    out = io.StringIO()
    call_command("calibrate", "--llm", "auto_edit/auto", "--human", "auto_edit/manual", "--metric", "A", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "A: 2 human topics of 2; 95% intervals"
    assert lines[3].split()[:3] == ["2", "r2", "0.4167"]
    out = io.StringIO()
    call_command("calibrate", "--simulate", "--human", "auto_edit/manual", "--metric", "A", "--seeds", "3", stdout=out)
    assert "3 runs x 2 topics" in out.getvalue()


@pytest.mark.shared_data
@pytest.mark.django_db
def test_calibration_on_nist_s_labels_covers_the_human_means(shared_data):
    """NIST's assignment labels as the truth, an LLM-like copy as the cheap source (docs/metaeval.md)."""
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=io.StringIO())
    call_command(
        "import_assignments", str(shared_data / "nugget_assignment.20241108.jl"), "--nuggets", "auto_edit",
        "--nuggets-name", "nist", "--assigner", "manual", "--assigner-name", "nist", stdout=io.StringIO(),
    )  # fmt: skip
    from metaeval.calibration import simulation_on_condition

    simulation = simulation_on_condition(
        nuggets="nist", assigner="nist", metric="Vstrict", fractions=[0.25, 0.5], seeds=range(50)
    )
    assert (simulation.runs, simulation.topics) == (45, 21)
    quarter, half = simulation.rows
    # The intervals hold the human means at least about as often as their nominal 95% ...
    assert quarter.coverage >= 0.9 and half.coverage >= 0.9
    # ... and a larger sample ranks the runs closer to people and misses their means by less.
    assert half.tau_mean > quarter.tau_mean and half.error < quarter.error < simulation.error_llm_only
