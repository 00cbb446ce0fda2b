"""Sources, the comparison, the commands and the descriptive table on small hand-built conditions."""

import json
import math
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from scipy.stats import kendalltau

from assignment.models import AssignmentLabel
from assignment.selectors import assignment_label_pairs
from metaeval.comparison import comparison_build
from metaeval.sources import SourceError, source_describe, source_parse
from metaeval.stats import confusion_from_pairs
from support.selectors import support_label_pairs
from tests.metaeval.builders import AUTO, MANUAL, NUGGETS, N, P, S

pytestmark = pytest.mark.django_db

def vstrict(labels: list[str], topic_id: str) -> float:
    """Vstrict, computed here from the protocol: full supports among vital nuggets / vital nuggets."""
    vital = [label for label, (_, importance) in zip(labels, NUGGETS[topic_id], strict=True) if importance == "vital"]
    return sum(label == S for label in vital) / len(vital)


def test_a_condition_is_compared_with_another_three_ways(conditions):
    comparison = comparison_build("auto_edit/manual", "auto_edit/auto", metrics=["Vstrict"])
    (tau,) = comparison.taus
    keys = sorted(MANUAL)
    manual = [vstrict(MANUAL[key], key[1]) for key in keys]
    auto = [vstrict(AUTO[key], key[1]) for key in keys]
    assert tau.pairs == 6 and tau.runs == 3 and tau.topics == 2
    assert tau.tau_all == pytest.approx(kendalltau(manual, auto).statistic)
    run_manual = [sum(v for k, v in zip(keys, manual, strict=True) if k[0] == run) / 2 for run in ("r1", "r2", "r3")]
    run_auto = [sum(v for k, v in zip(keys, auto, strict=True) if k[0] == run) / 2 for run in ("r1", "r2", "r3")]
    assert tau.tau_run == pytest.approx(kendalltau(run_manual, run_auto).statistic)
    per_topic = []
    for topic_id in ("t1", "t2"):
        picked = [i for i, key in enumerate(keys) if key[1] == topic_id]
        per_topic.append(kendalltau([manual[i] for i in picked], [auto[i] for i in picked]).statistic)
    defined = [value for value in per_topic if not math.isnan(value)]
    assert tau.tau_topic_avg == pytest.approx(sum(defined) / len(defined))


def test_the_confusion_matrix_counts_the_shared_answer_nugget_pairs(conditions):
    comparison = comparison_build("auto_edit/manual", "auto_edit/auto")
    confusion = comparison.confusion
    # By hand from the tables above, rows manual, columns auto (ns, ps, s):
    # manual ns: r1t1 n3->P, r2t1 n2->N, r2t1 n3->P, r3t1 n1->P, r3t1 n2->N, r2t2 n1->P, r3t2 n2->N
    # manual ps: r3t2 n1->N
    # manual s:  r1t1 n1->S, r1t1 n2->P, r2t1 n1->S, r3t1 n3->S, r1t2 n1,n2->S S, r2t2 n2->S
    assert confusion.labels == [N, P, S]
    assert confusion.counts == [[3, 4, 0], [1, 0, 0], [0, 1, 6]]
    # The same from the assignment app's label pairs, joined in Python.
    independent = confusion_from_pairs(
        assignment_label_pairs(nuggets="auto_edit", assigner="manual"),
        assignment_label_pairs(nuggets="auto_edit", assigner="auto"),
        [N, P, S],
    )
    assert confusion.counts == independent.counts
    # p_o = 9/15; marginals rows (7, 1, 7), columns (4, 5, 6): p_e = (28 + 5 + 42) / 225.
    p_e = 75 / 225
    assert confusion.agreement == pytest.approx(9 / 15)
    assert confusion.kappa == pytest.approx((9 / 15 - p_e) / (1 - p_e))
    assert (confusion.missing_a, confusion.missing_b) == (0, 0)
    # A pair only the first source labelled is counted apart, not in the matrix.
    AssignmentLabel.objects.filter(assigner="auto", label=S).first().delete()
    fewer = comparison_build("auto_edit/manual", "auto_edit/auto", metrics=["Vstrict"]).confusion
    assert (fewer.total, fewer.missing_b, fewer.missing_a) == (14, 1, 0)


def test_descriptive_statistics_of_a_hand_built_condition(conditions):
    described = source_describe(source_parse("auto_edit/manual"))
    labels = [label for labels in MANUAL.values() for label in labels]
    assert described == pytest.approx(
        {
            "topics": 2,
            "avg_nuggets": 5 / 2,
            "avg_nugget_words": (4 + 4 + 2 + 5 + 2) / 5,
            "pct_vital": 100 * 3 / 5,
            "pct_okay": 100 * 2 / 5,
            "pct_not_support": 100 * labels.count(N) / 15,
            "pct_partial_support": 100 * labels.count(P) / 15,
            "pct_support": 100 * labels.count(S) / 15,
        }
    )


def test_support_methods_compare_and_describe(support_methods):
    comparison = comparison_build("support:scratch", "support:auto")
    # Judged in both (the -1 left out): (2,2) (1,2) (0,0) (2,1) (1,1); rows scratch NS, PS, FS.
    assert comparison.confusion.labels == ["NS", "PS", "FS"]
    assert comparison.confusion.counts == [[1, 0, 0], [0, 1, 1], [0, 1, 1]]
    independent = confusion_from_pairs(
        {k: v for k, v in support_label_pairs(method="scratch").items() if v >= 0},
        {k: v for k, v in support_label_pairs(method="auto").items() if v >= 0},
        [0, 1, 2],
    )
    assert comparison.confusion.counts == independent.counts
    # The first citation scratch left unjudged (-1) was judged by auto only.
    assert (comparison.confusion.missing_b, comparison.confusion.missing_a) == (0, 1)
    assert {tau.metric for tau in comparison.taus} == {"weighted_precision", "weighted_recall"}
    assert source_describe(source_parse("support:scratch")) == {"topics": 1, "pairs": 5, "FS": 2, "PS": 2, "NS": 1}


def test_the_command_prints_the_json_scripts_read(conditions):
    out = StringIO()
    call_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/auto", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["a"] == "auto_edit/manual" and data["b"] == "auto_edit/auto"
    assert list(data["metrics"]) == ["A", "Astrict", "V", "Vstrict", "W", "Wstrict", "L"]
    for values in data["metrics"].values():
        assert {"tau_run", "tau_topic_avg", "tau_all", "runs", "topics", "pairs"} <= set(values)
        assert (values["runs"], values["topics"], values["pairs"]) == (3, 2, 6)
    assert data["confusion"]["labels"] == [N, P, S]
    assert data["confusion"]["counts"] == [[3, 4, 0], [1, 0, 0], [0, 1, 6]]
    assert data["confusion"]["agreement"] == pytest.approx(0.6)
    assert "kappa" in data["confusion"]

    text = StringIO()
    call_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/auto", "--metric", "Vstrict", stdout=text)
    assert "Vstrict" in text.getvalue() and "Wstrict" not in text.getvalue()
    assert "Cohen's kappa" in text.getvalue()


def test_the_describe_command_prints_json_per_source(conditions, support_methods):
    out = StringIO()
    call_command("describe", "auto_edit/manual", "support:scratch", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert set(data["auto_edit/manual"]) == {
        "topics", "avg_nuggets", "avg_nugget_words", "pct_vital", "pct_okay",
        "pct_not_support", "pct_partial_support", "pct_support",
    }  # fmt: skip
    assert data["support:scratch"] == {"topics": 1, "pairs": 5, "FS": 2, "PS": 2, "NS": 1}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("auto_edit/nobody", r"unknown source 'auto_edit/nobody'.*Sources with data: auto_edit/auto, auto_edit/manual"),
        ("support:nothing", r"unknown source 'support:nothing'"),
        ("scores:missing", r"no score table named 'missing'"),
        ("just-a-word", r"write NUGGETS/ASSIGNER, support:METHOD, scores:NAME or FAMILY:NAME"),
    ],
)
def test_an_unknown_source_is_a_clear_error(source, expected, conditions):
    with pytest.raises(CommandError, match=expected):
        call_command("metaeval", "--a", source, "--b", "auto_edit/manual", stdout=StringIO())
    with pytest.raises(CommandError, match=expected):
        call_command("describe", source, stdout=StringIO())


def test_a_metric_one_source_lacks_is_an_error(conditions):
    with pytest.raises(CommandError, match=r"metric nope is not in both"):
        call_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/auto", "--metric", "nope")


def test_conditions_on_different_nugget_sets_have_no_confusion_matrix(conditions):
    with pytest.raises(SourceError):
        source_parse("a/b/c")
    comparison = comparison_build("auto_edit/manual", "auto_edit/manual")
    assert comparison.confusion is not None and comparison.confusion.kappa == pytest.approx(1.0)
