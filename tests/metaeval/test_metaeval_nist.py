"""Descriptive statistics on NIST's real TREC 2024 RAG judgments, against counts read here from the files."""

import json
import math
from collections import Counter
from fractions import Fraction
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command, get_commands
from scipy import stats

from tests.metaeval.nist_fractions import vstrict_fractions

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data, pytest.mark.slow]

NUGGET_FILE = "nugget_assignment.20241108.jl"
SUPPORT_FILES = {
    "postedit": "final.citation_judgments_with_prediction.20241025.jsonl",
    "scratch": "final.citation_judgments_without_prediction.20241025.jsonl",
}


def _require_commands(*names: str) -> None:
    missing = [name for name in names if name not in get_commands()]
    if missing:
        pytest.skip(f"not available yet: {', '.join(missing)}")


def _lines(path: Path):
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _describe(*sources: str) -> dict:
    out = StringIO()
    call_command("describe", *sources, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_descriptive_statistics_of_nists_auto_edit_manual_condition(shared_data):
    _require_commands("import_topics", "import_assignments")
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=StringIO())
    call_command(
        "import_assignments", str(shared_data / NUGGET_FILE), "--nuggets", "auto_edit", "--assigner", "manual",
        stdout=StringIO(),
    )  # fmt: skip

    # Independently: the nuggets of a topic repeat on each of its answers; count them once a topic.
    topic_nuggets: dict[str, list[dict]] = {}
    labels: Counter = Counter()
    for record in _lines(shared_data / NUGGET_FILE):
        topic_nuggets.setdefault(record["qid"], record["nuggets"])
        labels.update(nugget["assignment"] for nugget in record["nuggets"])
    nuggets = [nugget for listed in topic_nuggets.values() for nugget in listed]
    importance = Counter(nugget["importance"] for nugget in nuggets)
    total_labels = sum(labels.values())

    described = _describe("auto_edit/manual")["auto_edit/manual"]
    assert described["topics"] == len(topic_nuggets) == 21
    assert described["avg_nuggets"] == pytest.approx(len(nuggets) / len(topic_nuggets))
    assert described["avg_nugget_words"] == pytest.approx(sum(len(n["text"].split()) for n in nuggets) / len(nuggets))
    assert described["pct_vital"] == pytest.approx(100 * importance["vital"] / len(nuggets))
    assert described["pct_okay"] == pytest.approx(100 * importance["okay"] / len(nuggets))
    for label in ("not_support", "partial_support", "support"):
        assert described[f"pct_{label}"] == pytest.approx(100 * labels[label] / total_labels)


def test_descriptive_statistics_of_nists_support_judgments(shared_data):
    _require_commands("import_topics", "import_support")
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=StringIO())
    for method, name in SUPPORT_FILES.items():
        call_command("import_support", str(shared_data / name), "--method", method, stdout=StringIO())

    described = _describe(*(f"support:{method}" for method in SUPPORT_FILES))
    for method, name in SUPPORT_FILES.items():
        topics: set[str] = set()
        grades: Counter = Counter()
        for record in _lines(shared_data / name):
            topics.add(record["topic_id"])
            for sentence in record["sentences"]:
                if sentence["citations"]:
                    # Only the first citation of a sentence is judged.
                    grades[int(sentence["citations"][0]["support"])] += 1
        assert described[f"support:{method}"] == {
            "topics": len(topics),
            "pairs": grades[0] + grades[1] + grades[2],
            "FS": grades[2],
            "PS": grades[1],
            "NS": grades[0],
        }


def test_nists_condition_compared_with_itself_agrees_fully(shared_data):
    """The whole chain on real data: every label pairs with itself, every tau is 1 where defined."""
    _require_commands("import_topics", "import_assignments")
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=StringIO())
    call_command(
        "import_assignments", str(shared_data / NUGGET_FILE), "--nuggets", "auto_edit", "--assigner", "manual",
        stdout=StringIO(),
    )  # fmt: skip
    answers = sum(1 for _ in _lines(shared_data / NUGGET_FILE))
    out = StringIO()
    call_command(
        "metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/manual", "--metric", "Vstrict", "--json", stdout=out
    )
    data = json.loads(out.getvalue())
    values = data["metrics"]["Vstrict"]
    assert values["pairs"] == answers
    assert values["topics"] == 21
    assert values["tau_run"] == pytest.approx(1.0) and values["tau_all"] == pytest.approx(1.0)
    assert data["confusion"]["kappa"] == pytest.approx(1.0)
    counts = data["confusion"]["counts"]
    assert sum(counts[i][i] for i in range(3)) == sum(map(sum, counts))


def test_bootstrap_on_nists_labels_ranks_runs_by_their_exact_means(shared_data):
    """NIST's Vstrict against a seeded LLM-like copy, 1,000 resamples of the 21 topics at seed 7: each resample's
    run means are the fractions' (NIST's from the file, the copy's read back with a denominator of at most
    100 and checked to round-trip), and the intervals of tau-b and Spearman's rho are those of scipy on them, of
    tau_ap_b that of its vectorized form (checked against ircor's in test_rankcorr) on them."""
    _require_commands("import_topics", "import_assignments")
    from assignment.comparison import llm_like_scores
    from metaeval.rankcorr import bootstrap_intervals, resampled_run_means, tau_ap_b, topic_draws

    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"), stdout=StringIO())
    call_command(
        "import_assignments", str(shared_data / NUGGET_FILE), "--nuggets", "auto_edit", "--assigner", "manual",
        stdout=StringIO(),
    )  # fmt: skip
    human = vstrict_fractions(shared_data / NUGGET_FILE)
    copy = {}
    for key, values in llm_like_scores(nuggets="auto_edit", assigner="manual", seed=0).per_topic.items():
        copy[key] = Fraction(values["Vstrict"]).limit_denominator(100)
        assert float(copy[key]) == values["Vstrict"]
    runs = sorted({run for run, _ in human})
    topics = sorted({topic for _, topic in human})
    assert (len(runs), len(topics), len(human)) == (45, 21, 927) and set(copy) == set(human)

    def matrix(scores):
        return np.array([[float(scores[(r, t)]) if (r, t) in scores else np.nan for t in topics] for r in runs])

    a, b = matrix(human), matrix(copy)
    draws = topic_draws(len(topics), samples=1000, seed=7)
    got_a, got_b = resampled_run_means(a, draws, missing="zero"), resampled_run_means(b, draws, missing="zero")
    taus, rhos, means_a, means_b, split = [], [], [], [], 0
    for sample, counts in enumerate(draws):
        drawn = {topic: int(count) for topic, count in zip(topics, counts, strict=True)}
        mean_a = [float(sum(human.get((r, t), 0) * c for t, c in drawn.items()) / len(topics)) for r in runs]
        mean_b = [float(sum(copy.get((r, t), 0) * c for t, c in drawn.items()) / len(topics)) for r in runs]
        assert got_a[sample].tolist() == mean_a and got_b[sample].tolist() == mean_b
        floats = [math.fsum(np.repeat(np.nan_to_num(row), counts.astype(int)).tolist()) / len(topics) for row in a]
        split += any(mean_a[i] == mean_a[j] and floats[i] != floats[j] for i in range(45) for j in range(i))
        taus.append(stats.kendalltau(mean_a, mean_b).statistic)
        rhos.append(stats.spearmanr(mean_a, mean_b).statistic)
        means_a.append(mean_a)
        means_b.append(mean_b)
    tau_aps = tau_ap_b(np.array(means_a), np.array(means_b))
    # The case can fail: on some resamples the floats' means, even summed exactly, split runs tied exactly.
    assert split > 0
    got = bootstrap_intervals(a, b, missing="zero", samples=1000, seed=None, top_k=10, draws=draws)
    assert got["tau"] == pytest.approx((np.percentile(taus, 2.5), np.percentile(taus, 97.5)), abs=1e-15)
    assert got["spearman"] == pytest.approx((np.percentile(rhos, 2.5), np.percentile(rhos, 97.5)), abs=1e-15)
    assert got["tau_ap"] == pytest.approx((np.percentile(tau_aps, 2.5), np.percentile(tau_aps, 97.5)), abs=1e-15)
