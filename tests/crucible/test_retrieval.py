"""Each topic's documents by BM25 over the collection's segments, against bm25s run here on a tiny corpus."""

import bm25s
import pytest
import Stemmer

from crucible.retrieval import bm25_ranked, segments_all
from tests.builders import make_segment

pytestmark = pytest.mark.django_db

CORPUS = {
    "d1": "Honey bees collect nectar from flowers and turn it into honey.",
    "d2": "Wasps build paper nests and do not make honey.",
    "d3": "Leaves change color in autumn when chlorophyll breaks down.",
    "d4": "Bees dance to tell the hive where the flowers are.",
    "d5": "Bears like honey.",
    "d6": "",  # no text: not a candidate
}


def test_the_ranking_is_bm25s_over_title_and_text_with_english_stop_words_and_stems():
    for docid, text in CORPUS.items():
        make_segment(docid, text=text)
    queries = ["How do honey bees make honey from flowers?", "autumn leaf colour", "zebra stripes"]
    documents = segments_all()
    assert [d.docid for d in documents] == ["d1", "d2", "d3", "d4", "d5"]
    # bm25s directly, as its documentation shows it.
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([f" {CORPUS[d.docid]}" for d in documents], stopwords="en", stemmer=stemmer))
    found, scores = retriever.retrieve(bm25s.tokenize(queries, stopwords="en", stemmer=stemmer), k=5)
    expected = [
        [documents[int(i)].docid for i, score in zip(row, row_scores, strict=True) if score > 0]
        for row, row_scores in zip(found, scores, strict=True)
    ]
    ranked = bm25_ranked(documents, queries, k=5)
    assert ranked == expected
    # By hand: d1 has "honey" twice, "bees" and "flowers"; d2, d4 and d5 share a word or two. "leaf" stems to
    # "leaf" and "Leaves" to "leav", "colour" is not "color": only "autumn" finds d3. Nothing is of zebras.
    assert ranked[0][0] == "d1" and set(ranked[0]) == {"d1", "d2", "d4", "d5"}
    assert ranked[1] == ["d3"] and ranked[2] == []
    assert bm25_ranked(documents, queries[:1], k=2) == [expected[0][:2]]
