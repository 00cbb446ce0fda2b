"""ARGUE-style judgments out, as JSONL: one line per judged report, its sentences as judged, and who or what made
each judgment (its provenance).

    {"run_id", "topic_id", "bank", "kept", "check_all", "made_by",
     "sentences": [{"index", "text",
                    "citations": [{"docid", "supports": "yes"|"no"|"", "made_by"}],
                    "answers": [{"question_id", "question", "answer_index", "agrees": "yes"|"no", "made_by"}]}]}

`question_id` is the AutoJudge tools' id of a question (the md5 of its text). Only counted judgments are
written (submitted work, finished jobs); `argue_export_notes` says what that leaves out.
"""

import json
from collections import defaultdict
from collections.abc import Iterator

from argue.kinds import ARGUE, ARGUE_FAMILY, ARGUE_WORK
from argue.models import AnswerAttestation, JudgedReport, SupportAttestation
from assessor.models import AssessorWork, Citation, Sentence
from assessor.scoring.lifecycle import job_sentences, jobs_not_final_by, labels_counted, open_included, open_work_by
from nuggets.banks import question_id

MAKER = ("created_by__username", "job_id", "imported_from_id")


def _made_by(person: str | None, job_id: int | None, batch_id: int | None) -> str:
    return f"user:{person}" if person else f"job:{job_id}" if job_id else f"file:{batch_id}"


def argue_export_notes(*, name: str) -> list[str]:
    """What the export of a source leaves out, or holds as provisional, in sentences: people's work not submitted
    (a report is recorded as judged only when its topic is submitted, so open work is never written, whether or
    not open work is included) and jobs not finished. Empty when everything the source holds is written."""
    works = AssessorWork.objects.filter(kind=ARGUE_WORK, source__family=ARGUE_FAMILY, source__name=name)
    topics = sorted(topic for topic, _ in open_work_by(works).get((), []))
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


def _citations_judged(name: str, answer_ids: list[int]) -> dict[int, list[dict]]:
    """Each sentence's judged citations, in order: the document, the source's yes/no, who said it."""
    supports = {
        citation: (label, _made_by(*maker))
        for citation, label, *maker in labels_counted(
            SupportAttestation.objects.filter(source__family=ARGUE_FAMILY, source__name=name)
        ).values_list("citation_id", "label", *MAKER)
    }
    citations: dict[int, list[dict]] = defaultdict(list)
    for sentence_id, citation_id, docid in (
        Citation.objects.filter(sentence__answer_id__in=answer_ids)
        .order_by("sentence_id", "position")
        .values_list("sentence_id", "pk", "segment_id")
    ):
        if citation_id in supports:
            label, made_by = supports[citation_id]
            citations[sentence_id].append({"docid": docid, "supports": label, "made_by": made_by})
    return citations


def _answers_judged(name: str, answer_ids: list[int]) -> dict[int, list[dict]]:
    """Each sentence's judgments against the bank's gold answers, in the bank's order."""
    answers: dict[int, list[dict]] = defaultdict(list)
    for sentence_id, text, index, label, *maker in (
        labels_counted(AnswerAttestation.objects.filter(source__family=ARGUE_FAMILY, source__name=name))
        .filter(sentence__answer_id__in=answer_ids)
        .order_by("sentence_id", "question__position", "answer_index")
        .values_list("sentence_id", "question__text", "answer_index", "label", *MAKER)
    ):
        answers[sentence_id].append(
            {
                "question_id": question_id(text),
                "question": text,
                "answer_index": index,
                "agrees": label,
                "made_by": _made_by(*maker),
            }
        )
    return answers


def argue_lines(*, name: str) -> Iterator[str]:
    """The counted judgments of a source, one judged report a line; LookupError when it has none."""
    reports = list(
        labels_counted(JudgedReport.objects.filter(source__family=ARGUE_FAMILY, source__name=name))
        .order_by("answer__run__run_id", "answer__topic_id")
        .values_list("answer_id", "answer__run__run_id", "answer__topic_id", "bank", "kept", "check_all", *MAKER)
    )
    if not reports:
        raise LookupError(f"no counted ARGUE-style judgments under {name!r}")
    answer_ids = [row[0] for row in reports]
    sentences: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for pk, answer_id, index, text in (
        Sentence.objects.filter(answer_id__in=answer_ids)
        .order_by("answer_id", "index")
        .values_list("pk", "answer_id", "index", "text")
    ):
        sentences[answer_id].append((pk, index, text))
    citations = _citations_judged(name, answer_ids)
    answers = _answers_judged(name, answer_ids)
    for answer_id, run_id, topic_id, bank, kept, check_all, *maker in reports:
        judged = [
            {"index": index, "text": text, "citations": citations[pk], "answers": answers[pk]}
            for pk, index, text in sentences[answer_id][:kept]
        ]
        record = {
            "run_id": run_id,
            "topic_id": topic_id,
            "bank": bank,
            "kept": kept,
            "check_all": check_all,
            "made_by": _made_by(*maker),
            "sentences": judged,
        }
        yield json.dumps(record, ensure_ascii=False) + "\n"
