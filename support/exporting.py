"""Support labels and support scores, written in the formats the importers read."""

import json
from collections import defaultdict
from collections.abc import Iterator
from itertools import islice

from assessor.models import Citation, Sentence
from assessor.scores import Scores
from assignment.exporting import scores_lines
from support.models import SupportLabel
from support.selectors import method_answers, method_require

# Answers per round of queries: bounded memory, and below SQLite's parameter limit.
ANSWERS_PER_CHUNK = 500


def support_scores_lines(scores: Scores) -> Iterator[str]:
    """The support score TSV: the same layout as the nugget scores (assignment.exporting.scores_lines)."""
    return scores_lines(scores)


def support_lines(*, method: str) -> Iterator[str]:
    """The method's judged answers in NIST's support format, one JSON object a line, by topic then run id.

    `{"topic_id", "run_id", "sentences": [{"sentenceID", "text", "citations": [{"citationID", "reference", "support"}]}]}`
    with every sentence of the answer and every citation of a sentence, in
    order; `support` is "2", "1", "0" or "-1" (unjudged), and absent on a
    citation the method has no label for. Raises LookupError for an unknown method.
    """
    method_require(method=method)
    answers = (
        method_answers(method=method)
        .order_by("topic_id", "run__run_id")
        .values_list("id", "topic_id", "run__run_id")
        .iterator(chunk_size=ANSWERS_PER_CHUNK)
    )
    while chunk := list(islice(answers, ANSWERS_PER_CHUNK)):
        yield from _chunk_lines(chunk, method=method)


def _chunk_lines(chunk: list[tuple[int, str, str]], *, method: str) -> Iterator[str]:
    answer_ids = [answer_id for answer_id, _, _ in chunk]
    sentences: dict[int, list[dict]] = defaultdict(list)
    by_id: dict[int, dict] = {}
    for sentence_id, answer_id, index, text in (
        Sentence.objects.filter(answer_id__in=answer_ids).order_by("answer_id", "index").values_list(
            "id", "answer_id", "index", "text"
        )
    ):
        sentence = {"sentenceID": index, "text": text, "citations": []}
        sentences[answer_id].append(sentence)
        by_id[sentence_id] = sentence
    labels = dict(
        SupportLabel.objects.filter(method=method, citation__sentence__answer_id__in=answer_ids).values_list(
            "citation_id", "label"
        )
    )
    for citation_id, sentence_id, position, docid in (
        Citation.objects.filter(sentence__answer_id__in=answer_ids)
        .order_by("sentence_id", "position")
        .values_list("id", "sentence_id", "position", "segment_id")
    ):
        citation = {"citationID": position, "reference": docid}
        if citation_id in labels:
            citation["support"] = str(labels[citation_id])
        by_id[sentence_id]["citations"].append(citation)
    for answer_id, topic_id, run_id in chunk:
        record = {"topic_id": topic_id, "run_id": run_id, "sentences": sentences[answer_id]}
        yield json.dumps(record, ensure_ascii=False) + "\n"
