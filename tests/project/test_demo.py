"""load_demo: the shipped demo dataset and accounts.

The expected counts are read from the demo files here, with json and csv,
not from the importers.
"""

import csv
import io
import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.http import HttpRequest
from django.test import Client

from argue import kinds as argue_kinds
from argue.models import ArgueWork
from assessor.models import (
    Answer,
    AssessorWork,
    Campaign,
    CampaignMember,
    Citation,
    ImportBatch,
    Qrel,
    Run,
    Segment,
    Sentence,
    Topic,
)
from assessor.models.keys import published_id, topic_key
from assessor.work.roles import Role, user_role
from assignment.models import AssignmentLabel
from grades import kinds as grade_kinds
from nuggets import kinds as nugget_kinds
from nuggets.banks import bank_questions
from nuggets.models import GoldAnswer, Nugget, NuggetSet
from preferences import kinds as preference_kinds
from support import kinds as support_kinds
from support.models import SupportLabel

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[2] / "demo" / "data"
TREC, KIDDIE = "trec-2024-rag-demo", "rag4reports-kiddie"
ACCOUNTS = {
    "organizer": ("organizer-demo", Role.ORGANIZER),
    "assessor1": ("assessor-demo", Role.ASSESSOR),
    "assessor2": ("assessor-demo", Role.ASSESSOR),
}


def _jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (DEMO / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _run_files() -> list[dict]:
    return [answer for path in sorted((DEMO / "runs").glob("*.jsonl")) for answer in _jsonl(f"runs/{path.name}")]


def _same_run(a: str, b: str) -> bool:
    # The project's run-id rule: equal, or equal but for a team prefix ending in a dot.
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def _expected() -> dict[str, int]:
    with (DEMO / "topics.tsv").open(encoding="utf-8", newline="") as handle:
        topics = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    qrels = [line.split() for line in (DEMO / "qrels.txt").read_text().splitlines() if line.strip()]
    segments_with_text = _jsonl("segments.jsonl")
    runs = _run_files()
    nugget_lines = _jsonl("nugget_assignment.jl")
    support = {
        "postedit": _jsonl("support_with_prediction.jsonl"),
        "scratch": _jsonl("support_without_prediction.jsonl"),
    }

    run_ids: list[str] = []
    answers: set[tuple[str, str]] = set()

    def run_of(run_id: str) -> str:
        for known in run_ids:
            if _same_run(run_id, known):
                return known
        run_ids.append(run_id)
        return run_id

    for answer in runs:
        answers.add((run_of(answer["run_id"]), answer["topic_id"]))
    for line in nugget_lines:
        answers.add((run_of(line["run_id"]), line["qid"]))
    for lines in support.values():
        for line in lines:
            answers.add((run_of(line["run_id"]), line["topic_id"]))

    docids = {row[2] for row in qrels} | {s["docid"] for s in segments_with_text}
    docids |= {docid for answer in runs for docid in answer["references"]}
    docids |= {
        c["reference"]
        for lines in support.values()
        for line in lines
        for s in line["sentences"]
        for c in s["citations"]
    }

    nuggets_of_topic = {}
    for line in nugget_lines:
        nuggets_of_topic.setdefault(line["qid"], len(line["nuggets"]))
    kiddie = _kiddie_expected()
    return {
        "topics": len(topics) + kiddie["topics"],
        "segments": len(docids) + kiddie["segments"],
        "segments_with_text": len(segments_with_text) + kiddie["segments_with_text"],
        "nist_qrels": len(qrels),
        "runs": len(run_ids) + kiddie["runs"],
        "answers": len(answers) + kiddie["answers"],
        "nugget_sets": len(nuggets_of_topic),
        "nuggets": sum(nuggets_of_topic.values()),
        "manual_labels": sum(len(line["nuggets"]) for line in nugget_lines),
        **{
            f"{method}_labels": sum(len(s["citations"]) for line in lines for s in line["sentences"])
            for method, lines in support.items()
        },
    }


def _kiddie_expected() -> dict[str, int]:
    """The report family's collection: requests, reports (a run's answer each) and the documents they cite."""
    reports = [report for path in sorted((DEMO / "kiddie" / "runs" / "repgen").glob("*.jsonl")) for report in
               _jsonl(f"kiddie/runs/repgen/{path.name}")]  # fmt: skip
    cited = {docid for report in reports for sentence in report["responses"] for docid in sentence["citations"]}
    documents = {docid: document for report in reports for docid, document in report.get("documents", {}).items()}
    return {
        "topics": len(_jsonl("kiddie/topics/kiddie-topics.jsonl")),
        "runs": len({report["metadata"]["run_id"] for report in reports}),
        "answers": len(reports),
        "segments": len(cited | set(documents)),
        "segments_with_text": sum(1 for document in documents.values() if document.get("text")),
    }


def _counts() -> dict[str, int]:
    return {
        "topics": Topic.objects.count(),
        "segments": Segment.objects.count(),
        "segments_with_text": Segment.objects.exclude(text="").count(),
        "nist_qrels": Qrel.objects.filter(source__name="nist").count(),
        "runs": Run.objects.count(),
        "answers": Answer.objects.count(),
        # NIST's labels, under the names the demo imports them as (files own them: no person writes there).
        "nugget_sets": NuggetSet.objects.filter(name="nist", source__kind="file").count(),
        "nuggets": Nugget.objects.filter(nugget_set__name="nist").count(),
        "manual_labels": AssignmentLabel.objects.filter(assigner="nist", source__kind="file").count(),
        "postedit_labels": SupportLabel.objects.filter(method="nist-postedit", source__kind="file").count(),
        "scratch_labels": SupportLabel.objects.filter(method="nist-scratch", source__kind="file").count(),
    }


def _everything() -> dict[str, int]:
    models = (Topic, Segment, Qrel, Run, Answer, Sentence, Citation, NuggetSet, Nugget)
    models += (GoldAnswer, AssignmentLabel, SupportLabel, ImportBatch, AssessorWork, ArgueWork)
    return {model.__name__: model.objects.count() for model in models}


def _load_demo() -> str:
    out = io.StringIO()
    call_command("load_demo", stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_it_loads_the_demo_files_and_a_second_run_adds_nothing():
    output = _load_demo()
    assert _counts() == _expected()
    # Real NIST data: the demo has human nugget labels and both support methods.
    assert _counts()["manual_labels"] > 2000 and _counts()["postedit_labels"] > 0 and _counts()["scratch_labels"] > 0
    for username, (password, _) in ACCOUNTS.items():
        assert f"{username} / {password}" in output

    before = _everything()
    _load_demo()
    assert _everything() == before


def _logs_in(username: str, password: str) -> bool:
    # The login throttle (django-axes) looks at the request of every login.
    return Client().login(request=HttpRequest(), username=username, password=password)


def _topic_ids(slug: str) -> set[str]:
    """The published ids of the topics of campaign `slug`."""
    return {
        published_id(key) for key in Topic.objects.unscoped().filter(campaign__slug=slug).values_list("pk", flat=True)
    }


def test_it_makes_two_campaigns_each_with_its_collection_and_every_account_in_both():
    _load_demo()
    campaigns = {c.slug: c for c in Campaign.objects.all()}
    assert set(campaigns) == {TREC, KIDDIE}
    trec, kiddie = campaigns[TREC], campaigns[KIDDIE]
    # The fresh database's first campaign became the TREC demo: its topics keep their ids as their keys.
    assert trec.pk == 1 and trec.key_suffix == ""
    assert (trec.title, trec.families, trec.answer_word_limit, trec.answer_reference_cap) == (
        "TREC 2024 RAG (demo)", ["rag"], 400, 20,
    )  # fmt: skip
    assert (kiddie.title, kiddie.families) == ("Rag4Reports kiddie", ["reports"])
    with (DEMO / "topics.tsv").open(encoding="utf-8") as handle:
        trec_ids = {line.split("\t")[0] for line in handle if line.strip()}
    assert _topic_ids(TREC) == trec_ids == {"2024-224701", "2024-79154", "2024-214096", "2024-213817"}
    assert _topic_ids(KIDDIE) == {topic["request_id"] for topic in _jsonl("kiddie/topics/kiddie-topics.jsonl")}
    assert _topic_ids(KIDDIE) == set(GOLD)
    # The kiddie reports are runs of the kiddie campaign only.
    kiddie_runs = set(Run.objects.unscoped().filter(campaign=kiddie).values_list("run_id", flat=True))
    assert kiddie_runs == {"run1", "run2", "run3", "run4"}
    assert not Answer.objects.filter(run__campaign=trec, topic__campaign=kiddie).exists()
    members = set(CampaignMember.objects.values_list("campaign__slug", "user__username"))
    assert members == {(slug, user) for slug in (TREC, KIDDIE) for user in ACCOUNTS}
    # Each demo work lies in its topic's campaign: two of each assessor's four.
    for username in ("assessor1", "assessor2"):
        work = AssessorWork.objects.unscoped().filter(assessor__username=username)
        assert sorted(work.values_list("topic__campaign__slug", flat=True)) == [KIDDIE, KIDDIE, TREC, TREC]


def test_the_demo_accounts_log_in_with_their_roles_and_the_assessors_have_work():
    _load_demo()
    for username, (password, role) in ACCOUNTS.items():
        assert _logs_in(username, password), username
        assert user_role(User.objects.get(username=username)) == role
    for username in ("assessor1", "assessor2"):
        work = AssessorWork.objects.filter(assessor__username=username)
        assert work.exists()
        assert set(work.values_list("topic_id", flat=True)) <= set(Topic.objects.values_list("id", flat=True))


def test_an_account_that_exists_keeps_its_password():
    _load_demo()
    organizer = User.objects.get(username="organizer")
    organizer.set_password("changed-by-the-organizer")
    organizer.save()
    _load_demo()
    assert _logs_in("organizer", "changed-by-the-organizer")
    assert not _logs_in("organizer", "organizer-demo")


def test_the_demo_work_starts_empty_beside_nist_s_labels():
    """NIST's labels lie on the demo topics, under names of their own: the assessors' work sees none of them."""
    from support.judging import support_page_load

    _load_demo()
    works = list(AssessorWork.objects.select_related("source"))
    assert works and all(work.source is not None and work.source.kind == "person" for work in works)
    support_work = next(work for work in works if work.kind == support_kinds.SUPPORT_SCRATCH)
    page = support_page_load(work=support_work)
    assert page.pairs_done == 0 and page.pairs_total > 0
    # The same topic's pairs are judged in NIST's file, under its own name.
    assert SupportLabel.objects.filter(citation__sentence__answer__topic_id=support_work.topic_id).exists()


# The gold bank (demo/data/kiddie/banks/kiddie-gold.v3.jsonl), counted by hand: per request its questions, how
# many of them are vital, how many have the AND rule, and its gold answers.
GOLD = {
    "leaf": {"questions": 5, "vital": 4, "and": 1, "answers": 7},
    "cloud": {"questions": 5, "vital": 3, "and": 1, "answers": 9},
    "bee": {"questions": 4, "vital": 3, "and": 0, "answers": 6},
    "earthworms": {"questions": 4, "vital": 2, "and": 0, "answers": 6},
    "hibernation": {"questions": 4, "vital": 3, "and": 2, "answers": 6},
}


def test_the_gold_bank_is_a_file_s_bank_that_counts_on_every_kiddie_request():
    _load_demo()
    banks = NuggetSet.objects.filter(name="gold")
    assert {bank.topic_id for bank in banks} == {_kiddie_key(topic_id) for topic_id in GOLD}
    assert all(bank.form == "questions" and bank.source.kind == "file" for bank in banks)
    counted = bank_questions("gold", [_kiddie_key(topic_id) for topic_id in GOLD])
    for topic_id, expected in GOLD.items():
        questions = counted[_kiddie_key(topic_id)]
        assert {
            "questions": len(questions),
            "vital": sum(1 for q in questions if q.importance == "vital"),
            "and": sum(1 for q in questions if q.rule == "and"),
            "answers": sum(len(q.answers) for q in questions),
        } == expected, topic_id
        # Every question is either vital or okay and has its rule and at least one answer citing a document.
        assert all(q.importance in ("vital", "okay") and q.rule in ("or", "and") for q in questions)
        assert all(q.answers and all(a.documents for a in q.answers) for q in questions)
    assert GoldAnswer.objects.filter(nugget__nugget_set__name="gold").count() == 34
    # Every reference is a document one of the kiddie reports gives (its text is in the collection).
    documents = set(Segment.objects.exclude(text="").values_list("pk", flat=True))
    cited = {d for a in GoldAnswer.objects.filter(nugget__nugget_set__name="gold") for d in a.documents}
    assert cited and cited <= documents
    assert {"Chlorophyll", "Soil_saturation", "Torpor", "Honeycomb", "Precipitation"} <= cited


def _kiddie_key(topic_id: str) -> str:
    return topic_key(topic_id, Campaign.objects.get(slug=KIDDIE))


def test_the_report_family_work_is_given_on_the_kiddie_requests():
    _load_demo()
    kiddie = AssessorWork.objects.filter(topic__campaign__slug=KIDDIE).select_related("source", "assessor")
    given = {(w.assessor.username, published_id(w.topic_id), w.kind, w.nugget_set_name) for w in kiddie}
    assert given == {
        ("assessor1", "bee", preference_kinds.PREFERENCE_WORK, ""),
        ("assessor1", "cloud", nugget_kinds.BANK_MANUAL, "cloud-bank"),
        ("assessor2", "hibernation", grade_kinds.GRADE_WORK, "gold"),
        ("assessor2", "leaf", argue_kinds.ARGUE_WORK, "gold"),
    }
    assert all(w.source is not None and w.source.kind == "person" and w.status == "not_started" for w in kiddie)
    # The cloud bank is opened empty for its author, a bank, never a nugget condition; it does not count yet.
    cloud = NuggetSet.objects.get(topic_id=_kiddie_key("cloud"), name="cloud-bank")
    assert cloud.form == "questions" and cloud.kind == "manual" and cloud.status == "open"
    assert not cloud.nuggets.exists() and not bank_questions("cloud-bank", [_kiddie_key("cloud")])
    assert ArgueWork.objects.get(work__topic_id=_kiddie_key("leaf")).bank == "gold"
