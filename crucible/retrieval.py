"""Each topic's candidate documents: BM25 (bm25s) over the collection's segments, the query being the
request's problem statement, title and background; stop words and stems as bm25s's English ones and
PyStemmer's Snowball English stemmer."""

from collections.abc import Sequence
from dataclasses import dataclass

from assessor.models import Segment


@dataclass(frozen=True)
class Document:
    docid: str
    title: str
    text: str


def segments_all() -> list[Document]:
    """The collection's segments with a text, in docid order (BM25's ties keep that order)."""
    rows = Segment.objects.exclude(text="").order_by("docid").values_list("docid", "title", "text")
    return [Document(docid, title, text) for docid, title, text in rows.iterator(chunk_size=5000)]


def bm25_ranked(documents: Sequence[Document], queries: Sequence[str], *, k: int) -> list[list[str]]:
    """Per query, the docids of the best `k` documents by BM25 (title and text), best first."""
    import bm25s
    import Stemmer

    if not documents or not queries:
        return [[] for _ in queries]
    stemmer = Stemmer.Stemmer("english")
    corpus = [f"{document.title} {document.text}".strip() for document in documents]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    tokens = bm25s.tokenize(list(queries), stopwords="en", stemmer=stemmer, show_progress=False)
    found, scores = retriever.retrieve(tokens, k=min(k, len(documents)), show_progress=False, n_threads=1)
    return [
        [documents[int(index)].docid for index, score in zip(row, row_scores, strict=True) if score > 0]
        for row, row_scores in zip(found, scores, strict=True)
    ]
