"""Calibrated estimates (prediction-powered inference), checked against hand computations."""

import io
import itertools
import math
from fractions import Fraction

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor.scoring.kept import scores_refresh
from assessor.work.roles import Role
from assignment.comparison import LLM_LIKE_CONFUSION, llm_like_scores
from assignment.kinds import IMPORT_ASSIGNMENTS
from assignment.models import AssignmentLabel
from metaeval.calibration import calibration_build
from metaeval.ppi import Z_95, answer_sample, ppi_estimates, ppi_simulate, sample_only_means
from nuggets.models import Nugget
from tests.builders import make_answer, make_batch, make_run, make_user, source_of
from tests.metaeval.nist_fractions import vstrict_fractions


def test_an_estimate_and_its_interval_by_hand():
    llm = {("r", "t1"): 0.5, ("r", "t2"): 0.5, ("r", "t3"): 1.0, ("r", "t4"): 0.0}
    human = {("r", "t1"): 1.0, ("r", "t3"): 0.5}
    (estimate,) = ppi_estimates(
        llm=llm, human=human, runs=["r"], topics=["t1", "t2", "t3", "t4"], sample={"r": ["t1", "t3"]}
    )
    # LLM mean 0.5; differences on the sample +0.5 and -0.5: no correction.
    assert (estimate.llm_mean, estimate.correction, estimate.estimate) == (0.5, 0.0, 0.5)
    assert (estimate.sampled, estimate.answered) == (2, 4)
    # var(x) = 0.5 / 3 over N = 4, var(d) = 0.5 over n = 2.
    half = Z_95 * math.sqrt((0.5 / 3) / 4 + 0.5 / 2)
    assert estimate.low == pytest.approx(0.5 - half) and estimate.high == pytest.approx(0.5 + half)
    assert half == pytest.approx(1.0585, abs=1e-4)


def test_a_topic_a_run_did_not_answer_counts_zero_on_both_sides():
    llm = {("a", "t1"): 1.0, ("b", "t1"): 1.0, ("b", "t2"): 1.0}
    human = {("a", "t1"): 0.5, ("b", "t1"): 0.5, ("b", "t2"): 0.5}
    estimates = {
        e.run_id: e
        for e in ppi_estimates(
            llm=llm, human=human, runs=["a", "b"], topics=["t1", "t2"], sample={"a": ["t1"], "b": ["t1", "t2"]}
        )
    }
    # Run a answered one topic of two: x = [1, 0], d = [-0.5] on it, so 0.5 + 1/2 * -0.5. Run b: 1 - 0.5.
    assert estimates["a"].estimate == pytest.approx(0.25) and estimates["b"].estimate == pytest.approx(0.5)


def test_a_run_with_one_sampled_answer_takes_the_variance_pooled_over_every_runs_answers():
    llm = {("a", "t1"): 1.0, ("b", "t1"): 0.5, ("b", "t2"): 1.0}
    human = {("a", "t1"): 0.5, ("b", "t1"): 1.0, ("b", "t2"): 0.5}
    estimates = {
        e.run_id: e
        for e in ppi_estimates(
            llm=llm, human=human, runs=["a", "b"], topics=["t1", "t2"], sample={"a": ["t1"], "b": ["t1", "t2"]}
        )
    }
    # d over every sampled answer: -0.5, +0.5, -0.5, mean -1/6, variance (1/9 + 4/9 + 1/9) / 2 = 1/3.
    # Run a: x = [1, 0], var(x) = 0.5 over N = 2; |A|/N = 1/2; n = 1.
    a = estimates["a"]
    assert a.estimate == pytest.approx(0.5 + 0.5 * -0.5)
    assert a.half_width == pytest.approx(Z_95 * math.sqrt(0.5 / 2 + 0.25 * (1 / 3) / 1))
    # Run b has two: its own variance, 0.5 (d = +0.5, -0.5).
    assert estimates["b"].half_width == pytest.approx(Z_95 * math.sqrt(0.125 / 2 + 0.5 / 2))


def test_a_run_no_person_scored_has_no_estimate():
    llm = {("a", "t1"): 1.0, ("a", "t2"): 0.0, ("b", "t1"): 0.5, ("b", "t2"): 0.5}
    human = {("a", "t1"): 1.0, ("a", "t2"): 0.5}
    estimates = ppi_estimates(llm=llm, human=human, runs=["a", "b"], topics=["t1", "t2"], sample={"a": ["t1", "t2"]})
    assert [e.run_id for e in estimates] == ["a"]


def test_the_sample_is_of_answers_people_scored():
    with pytest.raises(ValueError, match="on topic t9 is not on one of the topics"):
        ppi_estimates(llm={}, human={("r", "t9"): 1.0}, runs=["r"], topics=["t1"], sample={"r": ["t9"]})
    with pytest.raises(ValueError, match="on topic t1 has no human score"):
        ppi_estimates(llm={}, human={}, runs=["r"], topics=["t1"], sample={"r": ["t1"]})
    with pytest.raises(ValueError, match="a variance needs two"):
        ppi_estimates(llm={}, human={("r", "t1"): 1.0}, runs=["r"], topics=["t1"], sample={"r": ["t1"]})


def test_a_share_of_each_runs_answers_is_drawn_the_same_for_a_seed():
    answers = {f"r{r}": [f"t{t:02d}" for t in range(21)] for r in range(3)}
    # On 21 answers a run, 5%, 10% and 25% are 1, 2 and 5 answers: each share its own sample size.
    for fraction, size in ((0.05, 1), (0.10, 2), (0.25, 5)):
        sample = answer_sample(answers, fraction=fraction, seed=3)
        assert {run: len(topics) for run, topics in sample.items()} == {"r0": size, "r1": size, "r2": size}
        assert sample == answer_sample(answers, fraction=fraction, seed=3)
    # Each run's answers are drawn apart: the runs' samples are not one set of topics.
    quarter = answer_sample(answers, fraction=0.25, seed=3)
    assert len({tuple(topics) for topics in quarter.values()}) > 1
    small = answer_sample({"r": ["t1", "t2"], "s": []}, fraction=0.01, seed=0)
    assert list(small) == ["r"] and len(small["r"]) == 1  # at least one answer a run that has any


def test_an_llm_that_agrees_with_people_is_recovered_exactly():
    scores = {(f"r{r}", f"t{t}"): ((r * 7 + t * 3) % 10) / 10 for r in range(6) for t in range(12)}
    simulation = ppi_simulate(
        llm=scores, human=scores, runs=[f"r{r}" for r in range(6)], topics=[f"t{t}" for t in range(12)],
        fractions=[0.25], seeds=range(5),
    )  # fmt: skip
    row = simulation.rows[0]
    assert (simulation.tau_llm_only, row.tau_mean, row.coverage, row.error) == (1.0, 1.0, 1.0, 0.0)


# Human scores over 14 topics whose run means tie as fractions: run a scores 1 on 5 topics (5/14), run b
# 1, 1, 1, 1 and four quarters on 8 (5/14 too), run c 1/2 on all 14, run d 1 on 2 (1/7). The LLM sees half
# of each score.
TIED_TOPICS = [f"t{t:02d}" for t in range(14)]
TIED_HUMAN = {
    **{("a", topic): 1.0 for topic in TIED_TOPICS[:5]},
    **{("b", topic): 1.0 if i < 4 else 0.25 for i, topic in enumerate(TIED_TOPICS[:8])},
    **{("c", topic): 0.5 for topic in TIED_TOPICS},
    **{("d", topic): 1.0 for topic in TIED_TOPICS[:2]},
}
TIED_LLM = {key: value / 2 for key, value in TIED_HUMAN.items()}


def test_sample_alone_means_tie_where_their_fractions_do():
    answered = {"a": 5, "b": 8}
    # a: 5/14 x 1 / 1; b: 8/14 x (1/4 + 1) / 2 = 10/28. One number, 5/14.
    alone = sample_only_means(TIED_HUMAN, sample={"a": ["t00"], "b": ["t00", "t04"]}, answered=answered, topics=14)
    assert alone == {"a": 5 / 14, "b": 5 / 14}
    # The case can fail: the same means in floats, |A|/N times the sample's mean, split the two.
    assert 5 / 14 * 1.0 / 1 != 8 / 14 * math.fsum([0.25, 1.0]) / 2


def test_with_every_answer_sampled_both_rankings_are_the_human_one():
    """At 100%, the sample-alone means and the estimates are the human means, as fractions: both rank the runs
    as the human means do, ties kept (a and b tie), so their taus are 1 exactly."""
    simulation = ppi_simulate(
        llm=TIED_LLM, human=TIED_HUMAN, runs=["a", "b", "c", "d"], topics=TIED_TOPICS, fractions=[1.0], seeds=[1, 2]
    )
    (row,) = simulation.rows
    assert (row.sample_answers, row.repeats) == (29, 2)
    assert (row.tau_sample_only, row.tau_mean, row.error) == (1.0, 1.0, 0.0)
    # The LLM's means are half the human ones: the same order, the tie kept.
    assert simulation.tau_llm_only == 1.0


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
    assert "0.4167" in row and "0.1584 – 0.6749" in row and "0.6250" in row and "2 / 2" in row
    assert "3 of the 3 intervals of runs people scored on every answer hold their human means" in page
    bad = client.get(reverse("metaeval:calibrate"), {"llm": "auto_edit/auto", "human": "nope/nope", "metric": "A"})
    assert "unknown source" in bad.content.decode()


@pytest.mark.django_db
def test_runs_no_person_scored_are_left_out_and_named(client, conditions):
    """An LLM condition over a run people never judged: no estimate, no 'human mean 0', not counted as covered."""
    topic = conditions["topics"]["t1"]
    answer = make_answer(make_run("r4"), topic)
    nuggets = Nugget.objects.filter(nugget_set__name="auto_edit", nugget_set__topic=topic).order_by("position")
    batch = make_batch(kind=IMPORT_ASSIGNMENTS)
    AssignmentLabel.objects.bulk_create(
        AssignmentLabel(
            answer=answer, nugget=nugget, assigner="auto", assigner_kind="auto", label="support",
            source=source_of("assignment", "auto"), imported_from=batch,
        )
        for nugget in nuggets
    )  # fmt: skip
    scores_refresh(discover=True)
    result = calibration_build(llm="auto_edit/auto", human="auto_edit/manual", metric="A")
    assert result.unjudged == ["r4"] and "r4" not in {e.run_id for e in result.estimates}
    assert set(result.human_means) == {"r1", "r2", "r3"}
    client.force_login(make_user(Role.ORGANIZER))
    page = client.get(
        reverse("metaeval:calibrate"), {"llm": "auto_edit/auto", "human": "auto_edit/manual", "metric": "A"}
    ).content.decode()
    assert "Left out, as no person scored any of their answers: 1 runs (r4)" in page
    assert '<td class="mono">r4</td>' not in page


@pytest.mark.django_db
def test_the_page_checks_the_method_on_a_human_condition(client, conditions):
    client.force_login(make_user(Role.ORGANIZER))
    page = client.get(
        reverse("metaeval:calibrate"), {"sim_human": "auto_edit/manual", "sim_metric": "A", "sim_seeds": "4"}
    ).content.decode()
    table = page.split('<table id="simulation">')[1].split("</table>")[0]
    # 3 runs x 2 topics: 5%, 10% and 25% of each run's two answers are one answer a run.
    assert table.count("3 of 6") == 3 and ">5%<" in table and ">25%<" in table
    assert "3 runs x 2 topics, 6 answers scored by people" in page
    assert "Some shares draw the same number of answers on this condition (5%: 3, 10%: 3, 25%: 3)" in page
    # Larger shares, typed as percentages: 100% is both answers of each run.
    page = client.get(
        reverse("metaeval:calibrate"), {"sim_human": "auto_edit/manual", "sim_shares": "50, 100%", "sim_seeds": "2"}
    ).content.decode()
    table = page.split('<table id="simulation">')[1].split("</table>")[0]
    assert "3 of 6" in table and "6 of 6" in table and "Some shares draw" not in page
    refused = client.get(reverse("metaeval:calibrate"), {"sim_human": "support:scratch"}).content.decode()
    assert "is not a nugget condition" in refused
    for shares in ("half", "0 10", "150"):
        page = client.get(reverse("metaeval:calibrate"), {"sim_human": "auto_edit/manual", "sim_shares": shares})
        assert "percentage" in page.content.decode()


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
def test_an_llm_like_copy_is_the_same_whatever_order_its_labels_were_stored_in(monkeypatch):
    from assessor.models import Answer, Run, Topic
    from nuggets.models import NuggetSet
    from tests.metaeval import builders

    builders.build_conditions()
    first = llm_like_scores(nuggets="auto_edit", assigner="manual", seed=7).per_topic
    for model in (AssignmentLabel, Nugget, NuggetSet, Answer, Run, Topic):
        model.objects.all().delete()
    # The same labels stored again, their answers and nuggets made in the reverse order (other database ids).
    monkeypatch.setattr(builders, "MANUAL", dict(reversed(builders.MANUAL.items())))
    monkeypatch.setattr(builders, "NUGGETS", dict(reversed(builders.NUGGETS.items())))
    builders.build_conditions()
    assert llm_like_scores(nuggets="auto_edit", assigner="manual", seed=7).per_topic == first


@pytest.mark.django_db
def test_the_command_prints_the_estimates_and_the_simulation(conditions):
    out = io.StringIO()
    call_command("calibrate", "--llm", "auto_edit/auto", "--human", "auto_edit/manual", "--metric", "A", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        "A: people's scores on 6 answers of 3 of the 3 runs, over 2 topics; 95% intervals. "
        "3 of the 3 intervals of runs people scored on every answer hold their human means"
    )
    assert lines[3].split() == ["2", "r2", "0.4167", "0.1584", "0.6749", "0.6250", "2/2", "0.4167"]
    out = io.StringIO()
    call_command("calibrate", "--simulate", "--human", "auto_edit/manual", "--metric", "A", "--seeds", "3", stdout=out)
    assert "3 runs x 2 topics, 6 answers scored by people" in out.getvalue()
    assert [line.split()[:2] for line in out.getvalue().splitlines()[2:]] == [["5%", "3"], ["10%", "3"], ["25%", "3"]]


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
        nuggets="nist", assigner="nist", metric="Vstrict", fractions=[0.05, 0.10, 0.25, 0.5], seeds=range(50)
    )
    assert (simulation.runs, simulation.topics, simulation.answers) == (45, 21, 927)
    five, ten, quarter, half = simulation.rows
    # One answer a run at 5%, more at 10%: the shares are samples of answers, not of whole topics.
    assert five.sample_answers == 45 and ten.sample_answers > five.sample_answers
    # The intervals hold the human means at least about as often as their nominal 95% ...
    assert quarter.coverage >= 0.9 and half.coverage >= 0.9
    # ... and a larger sample ranks the runs closer to people and misses their means by less.
    assert half.tau_mean > quarter.tau_mean > ten.tau_mean
    assert half.error < quarter.error < ten.error < simulation.error_llm_only


@pytest.mark.shared_data
def test_the_sample_alone_on_nist_s_labels_keeps_every_tie_of_its_fractions(shared_data):
    """NIST's Vstrict, a 10% sample with each of 50 seeds: each run's sample-alone mean is |A|/N times its
    sampled scores' mean, worked here in fractions from NIST's file; runs whose fractions tie, tie. The floats'
    |A|/N times their mean split 82 such pairs over 34 of the 50 draws."""
    exact = vstrict_fractions(shared_data / "nugget_assignment.20241108.jl")
    human = {key: float(value) for key, value in exact.items()}
    runs = sorted({run for run, _ in exact})
    topics = sorted({topic for _, topic in exact})
    answers = {run: [topic for topic in topics if (run, topic) in exact] for run in runs}
    answered = {run: len(chosen) for run, chosen in answers.items()}
    assert (len(runs), len(topics), len(exact)) == (45, 21, 927)
    split_pairs, split_draws = 0, set()
    for seed in range(50):
        sample = answer_sample(answers, fraction=0.10, seed=seed)
        alone = sample_only_means(human, sample=sample, answered=answered, topics=len(topics))
        fractions = {
            run: Fraction(answered[run], len(topics)) * sum(exact[(run, t)] for t in chosen) / len(chosen)
            for run, chosen in sample.items()
        }
        floats = {
            run: answered[run] / len(topics) * math.fsum(human[(run, t)] for t in chosen) / len(chosen)
            for run, chosen in sample.items()
        }
        assert alone == {run: float(value) for run, value in fractions.items()}
        for first, second in itertools.combinations(runs, 2):
            if fractions[first] == fractions[second] and floats[first] != floats[second]:
                split_pairs += 1
                split_draws.add(seed)
    assert (split_pairs, len(split_draws)) == (82, 34)
