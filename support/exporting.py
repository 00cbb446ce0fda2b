"""Support labels and support scores, written in the formats the importers read."""

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping

from assessor.collection.exporting import PROVENANCE_FIELDS, provenance_record
from assessor.collection.score_formats import run_display, run_published_ids
from assessor.models import Answer, Citation, Sentence
from assessor.models.keys import published_id
from assessor.scoring.scores import Scores
from assignment.exporting import scores_lines
from support.selectors import counted_labels, method_require


def support_scores_lines(scores: Scores) -> Iterator[str]:
    """The support score TSV: the same layout as the nugget scores (assignment.exporting.scores_lines)."""
    return scores_lines(scores)


def support_lines(*, method: str, provenance: bool = False, team_prefix: bool = False) -> Iterator[str]:
    """The method's judged answers in NIST's support format, one JSON object a line, by topic then run id.

    `{"topic_id", "run_id", "sentences": [{"sentenceID", "text",
      "citations": [{"citationID", "reference", "support"}]}]}`,
    with every sentence of the answer and every citation of a sentence, in
    order; `support` is "2", "1", "0" or "-1" (unjudged), and absent on a
    citation the method has no label for. With `provenance`, each labelled
    citation also carries `"provenance": {"made_by", "at", "seconds"}`, and,
    in post-editing, `"shown"`: the LLM label the assessor was shown
    (importers ignore the key). With `team_prefix`, run ids are written as the
    track published them where an import saw that form. Reads one topic at a time.
    Raises LookupError for an unknown method.
    """
    method_require(method=method)
    judged = set(
        counted_labels()
        .filter(method=method)
        .order_by()
        .values_list("citation__sentence__answer_id", flat=True)
        .distinct()
    )
    by_topic: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for answer_id, topic_id, run_id in Answer.objects.order_by().values_list("id", "topic_id", "run__run_id"):
        if answer_id in judged:
            by_topic[topic_id].append((run_id, answer_id))
    published = run_published_ids() if team_prefix else None
    for topic_id in sorted(by_topic):
        yield from _topic_lines(
            topic_id, sorted(by_topic[topic_id]), method=method, provenance=provenance, published=published
        )


def _topic_lines(
    topic_id: str,
    answers: list[tuple[str, int]],
    *,
    method: str,
    provenance: bool = False,
    published: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """The lines of one topic's judged answers, given as sorted (run id, answer id) pairs."""
    wanted = {answer_id for _, answer_id in answers}
    sentences: dict[int, list[dict]] = defaultdict(list)
    by_id: dict[int, dict] = {}
    for sentence_id, answer_id, index, text in (
        Sentence.objects.filter(answer__topic_id=topic_id)
        .order_by("answer_id", "index")
        .values_list("id", "answer_id", "index", "text")
    ):
        if answer_id in wanted:
            sentence = {"sentenceID": index, "text": text, "citations": []}
            sentences[answer_id].append(sentence)
            by_id[sentence_id] = sentence
    # Filtered on the topic only, so that the database walks the topic's citations rather
    # than every label of the method; the method is checked here.
    labels: dict[int, int] = {}
    made: dict[int, dict] = {}
    fields = ("citation_id", "label", "method", "shown_label", *(PROVENANCE_FIELDS if provenance else ()))
    for citation_id, label, label_method, shown, *maker in (
        counted_labels().filter(citation__sentence__answer__topic_id=topic_id).values_list(*fields)
    ):
        if label_method != method:
            continue
        labels[citation_id] = label
        if maker:
            made[citation_id] = provenance_record(*maker)
            if shown is not None:
                made[citation_id]["shown"] = str(shown)
    for citation_id, sentence_id, position, docid in (
        Citation.objects.filter(sentence__answer__topic_id=topic_id)
        .order_by("sentence_id", "position")
        .values_list("id", "sentence_id", "position", "segment_id")
    ):
        if sentence_id not in by_id:
            continue
        citation = {"citationID": position, "reference": docid}
        if citation_id in labels:
            citation["support"] = str(labels[citation_id])
        if citation_id in made:
            citation["provenance"] = made[citation_id]
        by_id[sentence_id]["citations"].append(citation)
    for run_id, answer_id in answers:
        record = {
            "topic_id": published_id(topic_id),
            "run_id": run_display(run_id, published),
            "sentences": sentences[answer_id],
        }
        yield json.dumps(record, ensure_ascii=False) + "\n"
