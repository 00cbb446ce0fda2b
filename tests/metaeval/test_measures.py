"""The new measures where the meta-evaluation shows them: the command's JSON and table, the CSV and the page."""

import csv
import io
import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from scipy import stats

from assessor.scoring.scores import Scores
from assessor.work.roles import Role
from metaeval.stats import TauOptions, taus_compute
from tests.builders import make_user
from tests.metaeval.builders import build_conditions

RUN_KEYS = {"tau_run", "spearman_run", "pearson_run", "tau_ap_run", "tau_gap_run", "tau_top_k_run"}


def scores(per_topic: dict[tuple[str, str], float], topics: list[str]) -> Scores:
    runs = sorted({run for run, _ in per_topic})
    return Scores(
        metrics=("V",),
        per_topic={key: {"V": value} for key, value in per_topic.items()},
        topics=topics,
        runs=runs,
    )


# Run r3 did not answer topic t2 in a.
A = {("r1", "t1"): 0.9, ("r1", "t2"): 0.1, ("r2", "t1"): 0.5, ("r2", "t2"): 0.6, ("r3", "t1"): 0.8}
B = {("r1", "t1"): 0.7, ("r1", "t2"): 0.2, ("r2", "t1"): 0.6, ("r2", "t2"): 0.5, ("r3", "t1"): 0.9, ("r3", "t2"): 0.1}
TOPICS = ["t1", "t2"]


def test_a_missing_topic_counts_zero_or_is_skipped():
    a, b = scores(A, TOPICS), scores(B, TOPICS)
    # Zero: a's means r1 0.5, r2 0.55, r3 0.4; b's r1 0.45, r2 0.55, r3 0.5.
    zero = taus_compute(a, b, "V")
    assert zero.pearson_run == pytest.approx(stats.pearsonr([0.5, 0.55, 0.4], [0.45, 0.55, 0.5]).statistic)
    # Skip: r3's mean in a is 0.8 (its one answered topic): a ranks r3 first.
    skip = taus_compute(a, b, "V", TauOptions(missing="skip"))
    assert skip.pearson_run == pytest.approx(stats.pearsonr([0.5, 0.55, 0.8], [0.45, 0.55, 0.5]).statistic)
    assert skip.spearman_run == pytest.approx(stats.spearmanr([0.5, 0.55, 0.8], [0.45, 0.55, 0.5]).statistic)


def test_a_topic_subset_is_all_that_counts():
    a, b = scores(A, TOPICS), scores(B, TOPICS)
    only_t1 = taus_compute(a, b, "V", TauOptions(topics=frozenset({"t1"})))
    xs, ys = [0.9, 0.5, 0.8], [0.7, 0.6, 0.9]
    assert only_t1.tau_run == pytest.approx(stats.kendalltau(xs, ys).statistic)
    assert only_t1.pearson_all == pytest.approx(stats.pearsonr(xs, ys).statistic)
    assert (only_t1.topics, only_t1.pairs) == (1, 3)


def test_per_topic_averages_and_all_pairs_of_spearman_and_pearson():
    a, b = scores(A, TOPICS), scores(B, TOPICS)
    result = taus_compute(a, b, "V")
    t1 = stats.spearmanr([0.9, 0.5, 0.8], [0.7, 0.6, 0.9]).statistic
    t2 = stats.spearmanr([0.1, 0.6], [0.2, 0.5]).statistic  # r3 has no score in a on t2
    assert result.spearman_topic_avg == pytest.approx((t1 + t2) / 2)
    keys = sorted(A)
    assert result.pearson_all == pytest.approx(stats.pearsonr([A[k] for k in keys], [B[k] for k in keys]).statistic)


def test_intervals_are_seeded_and_hold_the_point_estimate_mostly():
    rng = np.random.default_rng(0)
    topics = [f"t{i}" for i in range(30)]
    a_values = {(f"r{r}", t): float(rng.random()) for r in range(12) for t in topics}
    b_values = {key: value + float(rng.normal(0, 0.2)) for key, value in a_values.items()}
    a, b = scores(a_values, topics), scores(b_values, topics)
    first = taus_compute(a, b, "V", TauOptions(bootstrap=300, seed=7))
    again = taus_compute(a, b, "V", TauOptions(bootstrap=300, seed=7))
    assert first.ci95 == again.ci95 and set(first.ci95) == RUN_KEYS
    for name in ("tau_run", "spearman_run", "pearson_run"):
        low, high = first.ci95[name]
        assert low <= getattr(first, name) <= high
    assert taus_compute(a, b, "V", TauOptions(bootstrap=0)).ci95 == {}


@pytest.mark.django_db
def test_metaeval_json_has_the_keys_scripts_read():
    build_conditions()
    out = StringIO()
    call_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/auto", "--bootstrap", "50", "--seed", "3", "--json", stdout=out)
    data = json.loads(out.getvalue())
    vstrict = data["metrics"]["Vstrict"]
    assert RUN_KEYS <= set(vstrict)
    assert set(vstrict["ci95"]) == RUN_KEYS
    assert all(len(interval) == 2 for interval in vstrict["ci95"].values())
    assert {"tau_topic_avg", "tau_all", "spearman_topic_avg", "spearman_all", "pearson_topic_avg", "pearson_all"} <= set(vstrict)
    assert {"kappa", "kappa_linear", "kappa_quadratic", "alpha_ordinal"} <= set(data["confusion"])
    assert data["options"] == {"top_k": 10, "top_k_of": "a", "bootstrap": 50, "seed": 3, "missing": "zero", "topics": None}
    again = StringIO()
    call_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/auto", "--bootstrap", "50", "--seed", "3", "--json", stdout=again)
    assert json.loads(again.getvalue()) == data


@pytest.mark.django_db
def test_metaeval_takes_a_topic_subset_by_ids_or_by_source():
    built = build_conditions()
    first = sorted(built["topics"])[0]
    out = StringIO()
    call_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/auto", "--topics", first, "--bootstrap", "0", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["metrics"]["Vstrict"]["topics"] == 1 and data["options"]["topics"] == [first]
    out = StringIO()
    call_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/auto", "--topics-of", "auto_edit/auto", "--bootstrap", "0", "--json", stdout=out)
    assert json.loads(out.getvalue())["metrics"]["Vstrict"]["topics"] == len(built["topics"])
    with pytest.raises(CommandError, match="unknown source"):
        call_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/auto", "--topics-of", "nope/none")


@pytest.mark.django_db
def test_metaeval_prints_the_run_level_table_with_intervals():
    build_conditions()
    out = StringIO()
    call_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/auto", "--bootstrap", "20", stdout=out)
    text = out.getvalue()
    assert "tau_ap_run" in text and "tau_gap_run" in text and "95% intervals from 20 resamples" in text
    assert "Krippendorff's alpha (ordinal)" in text and "weighted kappa linear" in text


@pytest.mark.django_db
def test_the_page_and_the_csv_show_the_coefficients_with_intervals(client):
    build_conditions()
    client.force_login(make_user(Role.ORGANIZER))
    query = {"a": "auto_edit/manual", "b": "auto_edit/auto", "metric": "Vstrict", "bootstrap": "40", "seed": "2"}
    page = client.get(reverse("metaeval:index"), query).content.decode()
    for heading in ("Spearman", "Pearson", "tau_ap_b", "tau_GAP", "tau top k", "40 resamples", "Krippendorff", "weighted kappa, quadratic"):
        assert heading in page
    assert '<span class="ci">[' in page
    assert "bootstrap=40" in page  # the downloads carry the options
    response = client.get(reverse("metaeval:taus_csv"), query)
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    header = rows[0]
    for column in ("spearman_run", "tau_gap_run", "tau_ap_run_ci_low", "tau_top_k_run_ci_high", "pearson_all"):
        assert column in header
    vstrict = dict(zip(header, next(row for row in rows if row[2] == "Vstrict"), strict=True))
    assert vstrict["bootstrap"] == "40" and vstrict["tau_run_ci_low"] != ""
    # Who made each source's labels, last: the kind and maker of each (an LLM's endpoint and model too).
    assert header[-12:] == [f"{side}_{field}" for side in "ab" for field in
                            ("kind", "made_by", "endpoint", "model", "prompt_versions", "job")]  # fmt: skip
    assert (vstrict["a_kind"], vstrict["a_made_by"], vstrict["a_endpoint"]) == ("file", "imported files", "")
    bad = client.get(reverse("metaeval:index"), {**query, "missing": "sometimes"}).content.decode()
    assert "missing must be zero or skip" in bad
