"""PrefNugget's pair sampling and Borda counts, against PROTOCOL.md's figures and hand-worked cases."""

import pytest

from preferences.borda import run_borda, standings
from preferences.sampling import report_pairs


def test_four_reports_are_all_compared_in_the_sampling_order():
    # Each report takes the three others after it (stride 1): ab ac ad, then bc bd (ba seen), then cd.
    assert report_pairs(["d", "b", "a", "c"]) == [
        ("a", "b"),
        ("a", "c"),
        ("a", "d"),
        ("b", "c"),
        ("b", "d"),
        ("c", "d"),
    ]


def test_six_reports_the_last_samples_a_pair_the_first_did_not():
    # Report 0 takes four partners of five (1-4); the pair (0, 5) is first seen by report 5, which is passage 1.
    runs = [f"r{index}" for index in range(6)]
    expected = [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (1, 5), (2, 3), (2, 4), (2, 5), (3, 4)]
    expected += [(3, 5), (4, 5), (5, 0)]
    assert report_pairs(runs) == [(f"r{a}", f"r{b}") for a, b in expected]


@pytest.mark.parametrize(("reports", "pairs"), [(10, 25), (57, 218), (1, 0), (2, 1)])
def test_the_published_pair_counts(reports, pairs):
    # PROTOCOL.md: n = 10 gives 25 pairs; n = 57 gives 218.
    sampled = report_pairs([f"run{index:02d}" for index in range(reports)])
    assert len(sampled) == pairs
    assert len({frozenset(pair) for pair in sampled}) == pairs  # each unordered pair once


def test_ten_reports_stride_two_with_a_phase():
    # n = 10: others are 9, stride 9 // 4 = 2, gcd(2, 9) = 1 so every phase is 0: partners at 1, 3, 5, 7 after.
    runs = [str(index) for index in range(10)]
    pairs = report_pairs(runs)
    assert pairs[:4] == [("0", "1"), ("0", "3"), ("0", "5"), ("0", "7")]
    # Report 1: others 2..9, 0 -> 2, 4, 6, 8.
    assert pairs[4:8] == [("1", "2"), ("1", "4"), ("1", "6"), ("1", "8")]


def test_borda_counts_both_ways_and_drops_ties_and_unreadable_answers():
    labels = [
        ("t", "a", "b", 1),  # a beats b
        ("t", "a", "c", 2),  # c beats a
        ("t", "b", "c", 0),  # tie: dropped
        ("t", "c", "d", None),  # unreadable: dropped
        ("t", "b", "d", 1),  # b beats d
        ("u", "a", "b", 2),  # on another topic, b beats a
    ]
    table = standings(labels)
    assert {key: (s.wins, s.losses, s.borda) for key, s in table.items()} == {
        ("t", "a"): (1, 1, 0),
        ("t", "b"): (1, 1, 0),
        ("t", "c"): (1, 0, 1),
        ("t", "d"): (0, 1, -1),
        ("u", "a"): (0, 1, -1),
        ("u", "b"): (1, 0, 1),
    }
    # The reports each beat: its own records first, then the flipped ones (c beat a as passage 2).
    assert table[("t", "a")].beat == ["b"] and table[("t", "c")].beat == ["a"] and table[("t", "b")].beat == ["d"]
    # Run means over both topics; a run with no standing on a topic counts 0 there.
    assert run_borda(table, ["t", "u"], ["a", "b", "c", "d", "e"]) == {
        "a": -0.5,
        "b": 0.5,
        "c": 0.5,
        "d": -0.5,
        "e": 0.0,
    }
