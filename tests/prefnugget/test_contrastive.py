"""PrefNugget's contrastive rules on small cases worked by hand: which pairs, in what order, which batches, what
is kept of an answer, when a topic stops and what its bank is."""

from prefnugget.contrastive import (
    QuestionList,
    WinnerLoser,
    bank_of,
    batches,
    kept_questions,
    labels_in_order,
    winner_loser_pairs,
)


def test_four_reports_give_the_winners_pairs_by_borda_of_winner_and_loser():
    # a beats b, c beats a, a beats d, b ties c, b beats d, c vs d unreadable.
    labels = [
        ("t", "a", "b", 1),
        ("t", "a", "c", 2),
        ("t", "a", "d", 1),
        ("t", "b", "c", 0),
        ("t", "b", "d", 1),
        ("t", "c", "d", None),
    ]
    # Borda: a 2 wins - 1 loss = 1, b 1 - 1 = 0, c 1, d -2.
    # Scores: c>a 1 + 0.99 = 1.99; a>b 1 + 0 = 1; a>d 1 - 1.98 = -0.98; b>d 0 - 1.98 = -1.98.
    pairs = winner_loser_pairs(labels)
    assert [(p.winner, p.loser) for p in pairs["t"]] == [("c", "a"), ("a", "b"), ("a", "d"), ("b", "d")]
    assert [round(p.score, 6) for p in pairs["t"]] == [1.99, 1.0, -0.98, -1.98]
    assert batches(pairs["t"]) == [[0, 1], [2, 3]]


def test_equal_scores_keep_the_references_order_of_winners_by_run_and_topic_string():
    # r1 beats x and r10 beats y: both 1 + 0.99 * -1. The reference groups by "run:topic" as strings, and
    # "r10:t" sorts before "r1:t" ("0" < ":"), so r10's pair comes first.
    labels = [("t", "r1", "x", 1), ("t", "r10", "y", 1)]
    assert [(p.winner, p.loser) for p in winner_loser_pairs(labels)["t"]] == [("r10", "y"), ("r1", "x")]


def test_a_winners_losers_come_in_the_order_of_its_records_given_then_flipped():
    # a beats d in a label as shown (a first), a beats b in a label shown the other way round (b first):
    # its given records come before its flipped ones. Both score 2 - 0.99 = 1.01.
    labels = [("t", "b", "a", 2), ("t", "a", "d", 1)]
    pairs = winner_loser_pairs(labels)["t"]
    assert [(p.winner, p.loser) for p in pairs] == [("a", "d"), ("a", "b")]
    assert pairs[0].score == pairs[1].score


def test_labels_are_read_in_the_sampling_order_of_the_topics_runs():
    labels = [("t", "c", "d", 1), ("t", "a", "b", 1), ("s", "x", "y", 2), ("t", "b", "d", 1), ("t", "d", "a", 1)]
    # Four runs: the sampling compares (a,b) (a,c) (a,d) (b,c) (b,d) (c,d); (d,a) is not among them: last.
    assert labels_in_order(labels) == [
        ("s", "x", "y", 2),
        ("t", "a", "b", 1),
        ("t", "b", "d", 1),
        ("t", "c", "d", 1),
        ("t", "d", "a", 1),
    ]


def test_only_decided_preferences_make_pairs_and_a_topic_without_one_has_none():
    labels = [("t", "a", "b", 0), ("t", "a", "c", None), ("u", "a", "b", 2)]
    assert winner_loser_pairs(labels) == {"u": [WinnerLoser("u", "b", "a", 1 + 0.99 * -1)]}


def test_each_topic_keeps_its_first_100_pairs():
    # 16 runs, each pair decided by run order: 120 pairs, 100 kept.
    runs = [f"r{n:02d}" for n in range(16)]
    labels = [("t", a, b, 1) for i, a in enumerate(runs) for b in runs[i + 1 :]]
    pairs = winner_loser_pairs(labels)["t"]
    assert len(pairs) == 100
    # Borda of r00 is 15, of r01 13: the best pair is r00 > r01 (15 + 0.99 * 13).
    assert (pairs[0].winner, pairs[0].loser, round(pairs[0].score, 6)) == ("r00", "r01", 27.87)
    assert batches(pairs)[-1] == [98, 99] and len(batches(pairs)) == 50
    assert batches(pairs[:3]) == [[0, 1], [2]]


def test_an_answer_keeps_its_first_two_non_empty_questions_stripped():
    assert kept_questions(["", "  Why?  ", None, 3, " ", "How?", "When?"]) == ["Why?", "How?"]
    assert kept_questions([]) == []


def test_a_topic_stops_once_it_holds_more_than_20_distinct_questions():
    so_far = QuestionList()
    so_far.add([f"q{n}" for n in range(20)] + ["q0", "q1"])
    assert not so_far.done() and len(so_far.so_far()) == 20
    so_far.add(["q20"])
    assert so_far.done()
    assert so_far.so_far()[:2] == ["q0", "q1"] and so_far.so_far()[-1] == "q20"


def test_the_bank_is_the_first_20_distinct_questions_in_order():
    produced = ["b", "a", "b", " c ", ""] + [f"q{n}" for n in range(30)]
    assert bank_of(produced) == ["b", "a", "c"] + [f"q{n}" for n in range(17)]
