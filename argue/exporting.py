"""ARGUE-style judgments out, as JSONL: one line per judged report, the judgments of its kept sentences, in the layout
`import_argue` reads (argue.files):

    {"run_id", "topic_id",
     "sentences": [{"index",
                    "citations": [{"docid", "supports": "yes"|"no"}],
                    "answers": [{"question_id", "answer_index", "agrees": "yes"|"no"}],
                    "needs_citation": "yes"|"no"|"", "first_instance": "yes"|"no"|"", "negative": "yes"|"no"|""}]}

`question_id` is the AutoJudge tools' id of a question (the md5 of its text); a check not asked is "". A citation
not judged (its document has no text) is left out, as the import reads a citation left out: not judged. Only
counted judgments are written (submitted work, finished jobs); `argue_export_notes` says what that leaves out.
"""

import json
from collections import defaultdict
from collections.abc import Iterator

from argue.kinds import ARGUE, ARGUE_FAMILY, ARGUE_WORK
from argue.models import AnswerAttestation, JudgedReport, SentenceCheck, SupportAttestation, UncitedAttestation
from assessor.models import AssessorWork, Citation, Sentence
from assessor.models.keys import published_id
from assessor.scoring.lifecycle import job_sentences, jobs_not_final_by, labels_counted, open_included, open_work_by
from nuggets.banks import question_id


def argue_export_notes(*, name: str) -> list[str]:
    """What the export of a source leaves out, or holds as provisional, in sentences: people's work not submitted
    (a report is recorded as judged only when its topic is submitted, so open work is never written, whether or
    not open work is included) and jobs not finished. Empty when everything the source holds is written."""
    works = AssessorWork.objects.filter(kind=ARGUE_WORK, source__family=ARGUE_FAMILY, source__name=name)
    topics = sorted(published_id(topic) for topic, _ in open_work_by(works).get((), []))
    notes = []
    if topics:
        shown = ", ".join(topics[:5]) + (", ..." if len(topics) > 5 else "")
        # A reopened topic keeps the reports its first submit recorded: open work included, they are written.
        what = (
            "written as it stands where it was submitted before and reopened (provisional), left out where it never was"
            if open_included()
            else "left out of the export until it is submitted"
        )
        notes.append(f"ARGUE-style judging into {name!r} is still open on {len(topics)} topic(s) ({shown}): {what}.")
    jobs = jobs_not_final_by(kind=ARGUE, names=[name]).get(name, [])
    return notes + job_sentences(jobs, labels="judgments", partial="the export holds only what it judged")


def _of_source(model, name: str):
    return labels_counted(model.objects.filter(source__family=ARGUE_FAMILY, source__name=name))


def _citations_judged(name: str, answer_ids: list[int]) -> dict[int, list[dict]]:
    """Each sentence's judged citations, in order: the document and the source's yes/no."""
    supports = dict(_of_source(SupportAttestation, name).exclude(label="").values_list("citation_id", "label"))
    citations: dict[int, list[dict]] = defaultdict(list)
    for sentence_id, citation_id, docid in (
        Citation.objects.filter(sentence__answer_id__in=answer_ids)
        .order_by("sentence_id", "position")
        .values_list("sentence_id", "pk", "segment_id")
    ):
        if citation_id in supports:
            citations[sentence_id].append({"docid": docid, "supports": supports[citation_id]})
    return citations


def _answers_judged(name: str, answer_ids: list[int]) -> dict[int, list[dict]]:
    """Each sentence's judgments against the bank's gold answers, in the bank's order."""
    answers: dict[int, list[dict]] = defaultdict(list)
    for sentence_id, text, index, label in (
        _of_source(AnswerAttestation, name)
        .filter(sentence__answer_id__in=answer_ids)
        .order_by("sentence_id", "question__position", "answer_index")
        .values_list("sentence_id", "question__text", "answer_index", "label")
    ):
        answers[sentence_id].append({"question_id": question_id(text), "answer_index": index, "agrees": label})
    return answers


def _uncited_judged(name: str, answer_ids: list[int]) -> dict[int, dict[str, str]]:
    """Each sentence's checks of a sentence citing nothing, by check."""
    uncited: dict[int, dict[str, str]] = defaultdict(dict)
    for sentence_id, asked, label in (
        _of_source(UncitedAttestation, name)
        .filter(sentence__answer_id__in=answer_ids)
        .values_list("sentence_id", "asked", "label")
    ):
        uncited[sentence_id][asked] = label
    return uncited


def argue_lines(*, name: str) -> Iterator[str]:
    """The counted judgments of a source, one judged report a line; LookupError when it has none."""
    reports = list(
        _of_source(JudgedReport, name)
        .order_by("answer__run__run_id", "answer__topic_id")
        .values_list("answer_id", "answer__run__run_id", "answer__topic_id", "kept")
    )
    if not reports:
        raise LookupError(f"no counted ARGUE-style judgments under {name!r}")
    answer_ids = [row[0] for row in reports]
    sentences: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for pk, answer_id, index in (
        Sentence.objects.filter(answer_id__in=answer_ids)
        .order_by("answer_id", "index")
        .values_list("pk", "answer_id", "index")
    ):
        sentences[answer_id].append((pk, index))
    citations = _citations_judged(name, answer_ids)
    answers = _answers_judged(name, answer_ids)
    uncited = _uncited_judged(name, answer_ids)
    for answer_id, run_id, topic_id, kept in reports:
        judged = [
            {
                "index": index,
                "citations": citations[pk],
                "answers": answers[pk],
                **{str(check): uncited[pk].get(check, "") for check in SentenceCheck},
            }
            for pk, index in sentences[answer_id][:kept]
        ]
        record = {"run_id": run_id, "topic_id": published_id(topic_id), "sentences": judged}
        yield json.dumps(record, ensure_ascii=False) + "\n"
