"""Nugget assignment labels and score tables, written in the formats the importers read.

`assignments_lines` writes NIST's nugget assignment format (what
`import_assignments` reads); `scores_lines` writes the official score TSV
(what `import_scores` reads). Both are generators of lines ending in "\n", so
that commands and downloads stream them.
"""

import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from assessor.collection.exporting import PROVENANCE_FIELDS, provenance_record
from assessor.collection.score_formats import run_display, run_published_ids, tsv_lines
from assessor.models import Answer
from assessor.models.keys import published_id
from assessor.scoring.scores import Scores
from assignment.models import AssignmentLabel
from assignment.selectors import condition_require, counted_labels
from nuggets.models import Nugget, NuggetSet
from nuggets.selectors import nugget_sets_counted_q

# What an answer's nugget without a label of the condition is written as: it
# scores 0 either way, and the format wants a label on every nugget.
UNLABELLED_AS = AssignmentLabel.Label.NOT_SUPPORT


def scores_lines(scores: Scores) -> Iterator[str]:
    """The TSV `run_id<TAB>topic_id<TAB>metric<TAB>value`, with a header.

    Per run (sorted): a row per evaluated answer's topic and metric, then the
    run's means under topic_id `all`. Topics the run has no evaluated answer
    for have no rows (their 0 is in the mean). Other layouts:
    assessor.collection.score_formats.
    """
    return tsv_lines(scores)


def _labels_read(
    *, assigner: str, nugget_ids: list[int], provenance: bool
) -> tuple[dict[int, dict[int, str]], dict[tuple[int, int], dict]]:
    """The assigner's counted labels of the nuggets, by answer then nugget, and, with `provenance`, who made each."""
    labels: dict[int, dict[int, str]] = defaultdict(dict)
    made: dict[tuple[int, int], dict] = {}
    fields = ("answer_id", "nugget_id", "label", *(PROVENANCE_FIELDS if provenance else ()))
    for answer_id, nugget_id, label, *maker in (
        counted_labels().filter(assigner=assigner, nugget_id__in=nugget_ids).values_list(*fields)
    ):
        labels[answer_id][nugget_id] = label
        if maker:
            made[(answer_id, nugget_id)] = provenance_record(*maker)
    return labels, made


def assignments_lines(
    *, nuggets: str, assigner: str, provenance: bool = False, team_prefix: bool = False
) -> Iterator[str]:
    """The condition's labelled answers in NIST's nugget assignment format, one JSON object a line.

    `{"query", "qid", "run_id", "answer_text", "response_length", "nuggets": [{"text", "importance", "assignment"}]}`,
    by topic then run id. Every answer lists all the nuggets of its topic's
    set, in order; one the answer has no label for is written `not_support`.
    With `provenance`, each labelled nugget also carries
    `"provenance": {"made_by", "at", "seconds"}` (who or what labelled it,
    when, and the seconds a person spent); importers ignore the key. With
    `team_prefix`, run ids are written as the track published them
    (`citi.BEST_cot_gpt3.5`) where an import saw that form. Reads one topic at a time. Raises LookupError for a condition without labels.
    """
    condition_require(nuggets=nuggets, assigner=assigner)
    published = run_published_ids() if team_prefix else None
    nugget_sets = NuggetSet.objects.filter(nugget_sets_counted_q(), name=nuggets, form=NuggetSet.Form.FACTS).order_by(
        "topic_id"
    )
    for set_id, topic_id, query in nugget_sets.values_list("id", "topic_id", "topic__query"):
        topic_nuggets = list(
            Nugget.objects.filter(nugget_set_id=set_id).order_by("position").values_list("id", "text", "importance")
        )
        labels, made = _labels_read(
            assigner=assigner, nugget_ids=[nugget_id for nugget_id, _, _ in topic_nuggets], provenance=provenance
        )
        if not labels:
            continue
        answers = (
            Answer.objects.filter(id__in=list(labels))
            .order_by("run__run_id")
            .values_list("id", "run__run_id", "text", "words")
        )
        for answer_id, run_id, text, words in answers:
            answer_labels = labels[answer_id]
            record: dict[str, Any] = {
                "query": query,
                "qid": published_id(topic_id),
                "run_id": run_display(run_id, published),
                "answer_text": text,
                "response_length": words,
                "nuggets": [
                    {
                        "text": nugget_text,
                        "importance": importance,
                        "assignment": answer_labels.get(nugget_id, UNLABELLED_AS),
                    }
                    for nugget_id, nugget_text, importance in topic_nuggets
                ],
            }
            if made:
                for entry, (nugget_id, _, _) in zip(record["nuggets"], topic_nuggets, strict=True):
                    if (answer_id, nugget_id) in made:
                        entry["provenance"] = made[(answer_id, nugget_id)]
            yield json.dumps(record, ensure_ascii=False) + "\n"
