"""Two LLMs side by side: AutoAssign by two endpoints (two local servers, the second turning every label round),
compared in the meta-evaluation like any two conditions."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from scipy.stats import kendalltau

from assessor.jobs.engine import job_run_sync
from assignment.auto import auto_assign_job_create
from metaeval.comparison import comparison_build
from tests.builders import make_answer, make_nugget_set, make_run, make_topic
from tests.llm_server import FLIPPED, expected_assign
from tests.metaeval.reference import pairs_of, pairwise_kappa

pytestmark = pytest.mark.django_db

LABELS = ["not_support", "partial_support", "support"]  # the meta-evaluation's order
SCORE = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
NUGGETS = {
    "t1": ["Paris is the capital", "the Seine crosses Paris", "France borders Spain"],
    "t2": ["zebras have stripes", "lions hunt at night", "giraffes are tall animals"],
}
ANSWERS = {  # run -> topic -> answer text
    "r1": {"t1": "Paris is the capital of France.", "t2": "Zebras have stripes and lions hunt at night."},
    "r2": {"t1": "The Seine crosses Paris; France borders Spain.", "t2": "Giraffes are tall animals."},
    "r3": {"t1": "Nothing about it.", "t2": "Animals are tall sometimes."},
    "r4": {"t1": "Capital cities have rivers.", "t2": "zebras have stripes, giraffes are tall animals"},
}


@pytest.fixture
def two_models(two_llm_endpoints):
    topics = {topic_id: make_topic(topic_id, query=f"query {topic_id}") for topic_id in NUGGETS}
    for topic_id, texts in NUGGETS.items():
        make_nugget_set(topics[topic_id], texts=texts, kind="manual", name="manual")
    for run_id, answers in ANSWERS.items():
        run = make_run(run_id)
        for topic_id, text in answers.items():
            make_answer(run, topics[topic_id], [(text, [])])
    for name, endpoint in (("by-alpha", "alpha"), ("by-beta", "beta")):
        job_run_sync(auto_assign_job_create(nuggets="manual", name=name, endpoint=endpoint).pk)
    return two_llm_endpoints


def hand_labels() -> dict[tuple[str, str, str], str]:
    return {
        (run, topic, nugget): expected_assign(nugget, text)
        for run, answers in ANSWERS.items()
        for topic, text in answers.items()
        for nugget in NUGGETS[topic]
    }


def test_two_models_conditions_compare_like_any_two_sources(two_models):
    comparison = comparison_build("manual/by-alpha", "manual/by-beta", metrics=["A"])
    # The confusion matrix: alpha's labels by the rule, beta's turned round, counted by hand.
    alpha = hand_labels()
    table = [[0] * 3 for _ in LABELS]
    for label in alpha.values():
        table[LABELS.index(label)][LABELS.index(FLIPPED[label])] += 1
    assert comparison.confusion.counts == table
    assert comparison.confusion.kappa == pytest.approx(
        pairwise_kappa(pairs_of(table), 3, lambda i, j, k: float(i != j))
    )
    # Run-level tau of the A score (mean over nuggets of s; a run's mean over topics), by scipy.
    runs = sorted(ANSWERS)

    def run_means(flip: bool) -> list[float]:
        means = []
        for run in runs:
            per_topic = [
                sum(SCORE[FLIPPED[alpha[run, t, n]] if flip else alpha[run, t, n]] for n in NUGGETS[t])
                / len(NUGGETS[t])
                for t in NUGGETS
            ]
            means.append(sum(per_topic) / len(per_topic))
        return means

    (tau,) = comparison.taus
    assert tau.runs == 4
    assert tau.tau_run == pytest.approx(kendalltau(run_means(False), run_means(True)).statistic)


def test_the_comparisons_json_names_each_sides_endpoint_and_model(two_models):
    out = StringIO()
    call_command("metaeval", "--a", "manual/by-alpha", "--b", "manual/by-beta", "--json", stdout=out)
    judges = json.loads(out.getvalue())["judges"]
    assert {side: (j["kind"], j["endpoint"], j["model"], j["prompt_versions"]) for side, j in judges.items()} == {
        "a": ("llm", "alpha", "model-alpha", {"assign": 1}),
        "b": ("llm", "beta", "model-beta", {"assign": 1}),
    }


def test_the_page_says_which_model_labelled_each_side(two_models, organizer):
    page = organizer.get(reverse("metaeval:index"), {"a": "manual/by-alpha", "b": "manual/by-beta"}).content.decode()
    assert "labelled by the LLM model-alpha of the endpoint &#x27;alpha&#x27;" in page
    assert "labelled by the LLM model-beta of the endpoint &#x27;beta&#x27;" in page
