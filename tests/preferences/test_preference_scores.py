"""A preference source's Borda leaderboard, and two sources compared in the meta-evaluation (kappa, tau)."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor.jobs.engine import job_run_sync
from assessor.models import Topic
from assessor.work.roles import Role
from metaeval.comparison import comparison_build
from preferences.judging import pair_order, pair_token, preference_save, preference_submit, preference_work_give
from preferences.llm import preferences_job_create
from preferences.models import PreferenceLabel
from preferences.scoring import borda_scores
from tests.builders import make_user
from tests.preferences.expected import expected_labels

pytestmark = pytest.mark.django_db
RUNS = ["run1", "run2", "run3", "run4"]


def hand_borda(labels: dict[tuple[str, str, str], int | None]) -> dict[str, float]:
    """Each run's mean over the five kiddie topics of wins - losses, written out directly."""
    totals = dict.fromkeys(RUNS, 0)
    for (_topic, first, second), label in labels.items():
        if label == 1:
            totals[first] += 1
            totals[second] -= 1
        elif label == 2:
            totals[second] += 1
            totals[first] -= 1
    return {run: total / 5 for run, total in totals.items()}


def test_the_borda_leaderboard_of_an_llms_preferences(llm_server, kiddie, organizer):
    job_run_sync(preferences_job_create(name="llm").pk)
    expected = hand_borda(expected_labels())
    scores = borda_scores(name="llm")
    assert {run: means["borda"] for run, means in scores.run_means.items()} == pytest.approx(expected)
    assert scores.topics == ["bee", "cloud", "earthworms", "hibernation", "leaf"]
    page = organizer.get(reverse("collection:borda_leaderboard") + "?source=llm").content.decode()
    best = max(expected, key=expected.get)
    assert "Borda leaderboard: llm" in page and page.index(best) < min(page.index(run) for run in RUNS if run != best)
    download = organizer.get(reverse("collection:download_borda_scores", args=["llm"]))
    assert download.status_code == 200


def judge_as_person(topic_id: str, choose) -> None:
    """An assessor judges every pair of a topic (choose(left run, right run) -> label) and submits."""
    assessor = make_user(Role.ASSESSOR)
    work = preference_work_give(topic=Topic.objects.get(pk=topic_id), assessor=assessor, by=None)
    runs = {answer.pk: answer.run.run_id for answer in Topic.objects.get(pk=topic_id).answers.select_related("run")}
    for number, pair in enumerate(pair_order(work), start=1):
        work.refresh_from_db()
        label = choose(runs[pair[0]], runs[pair[1]])
        preference_save(
            work_id=work.pk, user=assessor, number=number, label=str(label), previous="",
            expected_version=work.version, token=pair_token(pair),
        )  # fmt: skip
    work.refresh_from_db()
    preference_submit(work_id=work.pk, user=assessor, expected_version=work.version)


def test_a_person_and_an_llm_compared_confusion_and_kappa(llm_server, kiddie):
    job_run_sync(preferences_job_create(name="llm").pk)
    llm = expected_labels()
    # The person agrees with the LLM on bee but for ties (which the person calls for the first report); on leaf
    # always prefers the run with the lower number.
    judge_as_person("bee", lambda left, right: llm[("bee", left, right)] or 1)
    judge_as_person("leaf", lambda left, right: 1 if left < right else 2)
    person = {key: label for key, label in stored("people").items()}
    assert len(person) == 12
    comparison = comparison_build("preferences:llm", "preferences:people")
    confusion = comparison.confusion
    assert confusion is not None and confusion.labels == ["1", "0", "2"]
    # Rows the LLM's labels, columns the person's; counted from the two label maps by hand.
    order = {1: 0, 0: 1, 2: 2}
    counts = [[0] * 3 for _ in range(3)]
    for key, label in person.items():
        counts[order[llm[key]]][order[label]] += 1
    assert confusion.counts == counts
    assert confusion.missing_a == 0 and confusion.missing_b == 30 - 12
    # Cohen's kappa from the same counts, written out.
    total = 12
    observed = sum(counts[i][i] for i in range(3)) / total
    rows = [sum(row) for row in counts]
    columns = [sum(row[j] for row in counts) for j in range(3)]
    chance = sum(rows[i] * columns[i] for i in range(3)) / total**2
    assert confusion.kappa == pytest.approx((observed - chance) / (1 - chance))
    # The runs ranked by Borda: the person's two topics against the LLM's five.
    assert [tau.metric for tau in comparison.taus] == ["borda", "win_frac"]
    out = StringIO()
    call_command("metaeval", "--a", "preferences:llm", "--b", "preferences:people", stdout=out)
    assert f"Cohen's kappa {confusion.kappa:.4f}" in out.getvalue()


def test_a_pair_shown_the_other_way_round_is_turned_before_it_is_compared(kiddie):
    from assessor.models import Answer, LabelSource
    from assessor.scoring.kept import scores_refresh
    from tests.builders import make_batch

    answers = {a.run.run_id: a for a in Answer.objects.filter(topic_id="bee").select_related("run")}
    one = LabelSource.objects.create(family="preferences", name="one", kind=LabelSource.Kind.FILE)
    other = LabelSource.objects.create(family="preferences", name="other", kind=LabelSource.Kind.FILE)
    pair = {"topic_id": "bee", "imported_from": make_batch(kind="preferences")}
    PreferenceLabel.objects.create(source=one, first=answers["run1"], second=answers["run2"], label=1, **pair)
    PreferenceLabel.objects.create(source=other, first=answers["run2"], second=answers["run1"], label=2, **pair)
    scores_refresh(family="preferences", discover=True)
    confusion = comparison_build("preferences:one", "preferences:other", scores=False).confusion
    assert confusion.counts == [[1, 0, 0], [0, 0, 0], [0, 0, 0]]  # both said run1 is better


def stored(name: str) -> dict[tuple[str, str, str], int]:
    rows = PreferenceLabel.objects.filter(source__name=name).values_list(
        "topic_id", "first__run__run_id", "second__run__run_id", "label"
    )
    return {(topic, first, second): label for topic, first, second, label in rows}


def test_the_borda_ranking_correlates_with_the_kiddie_truth_leaderboard(llm_server, kiddie):
    """The LLM's Borda means against the kiddie truth's RELEVANCE (`all` rows): Kendall's tau from scipy."""
    from scipy.stats import kendalltau

    from metaeval.importing import scores_import
    from tests.reports.kiddie import KIDDIE

    job_run_sync(preferences_job_create(name="llm").pk)
    scores_import(path=KIDDIE / "eval" / "kiddie_fake.eval.ir_measures.txt", name="truth", layout="ir_measures")
    truth = {"run1": 0.864, "run2": 0.692, "run3": 0.316, "run4": 0.088}  # the file's `all` rows
    borda = hand_borda(expected_labels())
    comparison = comparison_build("preferences:llm", "scores:truth", metrics=["borda=RELEVANCE"])
    (tau,) = comparison.taus
    assert tau.metric == "borda=RELEVANCE" and tau.runs == 4
    assert tau.tau_run == pytest.approx(kendalltau([borda[r] for r in RUNS], [truth[r] for r in RUNS]).statistic)
    out = StringIO()
    call_command("metaeval", "--a", "preferences:llm", "--b", "scores:truth", "--metric", "borda=RELEVANCE", stdout=out)
    assert "borda=RELEVANCE" in out.getvalue()
    with pytest.raises(ValueError, match="scores:truth has no metric 'NDCG'"):
        comparison_build("preferences:llm", "scores:truth", metrics=["borda=NDCG"])


def test_the_meta_evaluation_page_compares_metrics_named_differently(llm_server, kiddie, organizer):
    from metaeval.importing import scores_import
    from tests.reports.kiddie import KIDDIE

    job_run_sync(preferences_job_create(name="llm").pk)
    scores_import(path=KIDDIE / "eval" / "kiddie_fake.eval.ir_measures.txt", name="truth", layout="ir_measures")
    query = {"a": "preferences:llm", "b": "scores:truth", "bootstrap": "0"}
    page = organizer.get(reverse("metaeval:index"), query).content.decode()
    assert "share no metric to compare" in page
    page = organizer.get(reverse("metaeval:index"), {**query, "pairs": "borda=RELEVANCE"}).content.decode()
    assert "share no metric" not in page and "borda=RELEVANCE" in page
