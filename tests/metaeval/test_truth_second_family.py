"""A leaderboard of the second family (an LLM's Borda counts on the kiddie reports) against the kiddie truth:
what `metaeval --truth` computes is what autojudge-evaluate computes from the leaderboard the app exports."""

import json
import math
import warnings
from io import StringIO

import pytest
from django.core.management import call_command

from assessor.collection.score_formats import ScoreFile, score_table_lines
from assessor.jobs.engine import job_run_sync
from preferences.llm import preferences_job_create
from preferences.scoring import borda_scores
from reports.importing import reports_import, requests_import
from tests.metaeval.autojudge_reference import reference_modules
from tests.metaeval.truth_data import KIDDIE_TRUTH
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

pytestmark = pytest.mark.django_db
FIVE = ["kendall", "pearson", "spearman", "tauap_b", "tau_gap"]


@pytest.fixture
def borda_and_truth(llm_server):
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)
    job_run_sync(preferences_job_create(name="llm").pk)
    call_command("import_scores", str(KIDDIE_TRUTH), "--name", "truth", "--format", "ir_measures", stdout=StringIO())


@pytest.mark.parametrize("layout", ["ir_measures", "jsonl"])
def test_the_borda_leaderboard_against_the_truth_as_meta_evaluate_computes_it_from_the_export(
    borda_and_truth, tmp_path, layout
):
    out = StringIO()
    call_command(
        "metaeval", "--a", "preferences:llm", "--truth", "scores:truth", "--metric", "borda=RELEVANCE",
        "--top-k", "3", "--json", stdout=out,
    )  # fmt: skip
    (pair,) = json.loads(out.getvalue())["pairs"]
    assert pair["runs"] == 4 and pair["missing_in_judged"] == [] and pair["missing_in_truth"] == []

    exported = tmp_path / f"borda.{layout}"
    exported.write_text("".join(score_table_lines(borda_scores(name="llm"), ScoreFile(layout=layout))))
    with reference_modules() as reference, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected: dict = {}
        topics: dict = {}
        for methods in (FIVE, ["kendall@3"]):
            evaluator = reference.evaluation.LeaderboardEvaluator(
                KIDDIE_TRUTH, truth_has_header=True, eval_format=layout, correlation_methods=methods
            )
            expected.update(evaluator.evaluate(exported)[("RELEVANCE", "borda")])
            for topic, values in evaluator.evaluate_per_topic(exported)[("RELEVANCE", "borda")].items():
                topics.setdefault(topic, {}).update(values)

    def same(got, want) -> bool:
        return (got is None and math.isnan(want)) or (got is not None and abs(got - float(want)) <= 1e-9)

    for name in [*FIVE, "kendall@3"]:
        assert same(pair[name], expected[name]), (name, pair[name], expected[name])
        for topic, values in topics.items():
            assert same(pair["per_topic"]["topics"][topic][name], values[name]), (topic, name)
    assert len(topics) == 5 == len(pair["per_topic"]["topics"])


def test_the_page_correlates_the_borda_leaderboard(borda_and_truth, organizer):
    from django.urls import reverse

    query = {"a": "preferences:llm", "truth": "scores:truth", "metric": "borda=RELEVANCE", "top_k": "3"}
    page = organizer.get(reverse("metaeval:truth"), query).content.decode()
    # kendall 1/3 and tau_GAP 0.2014 at run level, as the command gives them (test above).
    assert 'id="truth-runs"' in page and 'id="judges"' in page and "0.2014" in page
