"""The example app's importer on the upload page, and its kind of human work: given, judged, submitted, scored."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from assessor.labelkit.files import AnswerLabelsImport
from assessor.labelkit.scores import AnswerScores
from assessor.labelkit.work import answer_order
from assessor.models import AssessorWork, ImportBatch, LabelSource
from assessor.work.judging import answer_token
from assessor.work.roles import Role
from tests.builders import make_user
from tests.verdicts.models import VERDICT_WORK, Verdict
from tests.verdicts.parts import VERDICTS

pytestmark = pytest.mark.django_db


def jsonl(*rows: tuple[str, str, str]) -> str:
    return "".join(json.dumps({"run_id": run, "topic_id": topic, "verdict": v}) + "\n" for run, topic, v in rows)


def upload(client, content: str, **options):
    data = {"file": SimpleUploadedFile("v.jsonl", content.encode()), "kind": "verdicts", **options}
    return client.post(reverse("collection:upload"), data, follow=True)


@pytest.mark.usefixtures("upload_worker")
def test_the_upload_page_imports_verdicts_into_a_file_source(organizer, verdict_collection):
    page = organizer.get(reverse("collection:upload")).content.decode()
    assert '<option value="verdicts">Answer verdicts (JSONL)</option>' in page
    response = upload(organizer, jsonl(("r1", "t1", "yes"), ("r2", "t1", "no")), verdict_source="file-b")
    assert "2 lines: 2 created, 0 unchanged, 0 replaced." in response.content.decode()
    source = LabelSource.objects.get(family="verdicts", name="file-b")
    batch = ImportBatch.objects.get(kind="verdicts")
    assert (source.kind, source.imported_from_id) == (LabelSource.Kind.FILE, batch.pk)
    assert set(Verdict.objects.values_list("answer__run__run_id", "label", "imported_from_id")) == {
        ("r1", "yes", batch.pk),
        ("r2", "no", batch.pk),
    }


@pytest.mark.usefixtures("upload_worker")
def test_a_bad_verdict_file_changes_nothing_and_names_line_and_field(organizer, verdict_collection):
    response = upload(organizer, jsonl(("r1", "t1", "yes"), ("r2", "t1", "maybe")), verdict_source="file-c")
    page = response.content.decode()
    assert "Nothing was imported." in page
    assert "<dt>Line</dt><dd>2</dd>" in page
    assert '<dt>Field</dt><dd class="mono">verdict</dd>' in page
    assert not Verdict.objects.exists()
    assert not LabelSource.objects.filter(name="file-c").exists()


def test_an_llm_source_refuses_a_file(run_judge, verdict_collection, write_file):
    from assessor.importing.base import ImportFailure

    run_judge("llm-x", runs=["r1"])
    with pytest.raises(ImportFailure) as refused:
        AnswerLabelsImport(spec=VERDICTS, path=write_file("v.jsonl", jsonl(("r2", "t1", "no"))), name="llm-x").run()
    assert refused.value.field == "name" and "llm-x" in refused.value.message


def post_label(client, work: AssessorWork, number: int, label: str, previous: str = ""):
    answer_id = answer_order(work)[number - 1]
    data = {"label": label, "previous": previous, "version": work.version, "answer": answer_token(answer_id)}
    return client.post(reverse("verdicts:label", args=[work.pk, number]), data, HTTP_ACCEPT="application/json")


def assessor_client(user) -> Client:
    """A browser of the assessor's own, beside the organizer's (the `organizer` fixture is the test's client)."""
    client = Client()
    client.force_login(user)
    return client


def test_people_give_judge_and_submit_verdicts(organizer, verdict_collection):
    ann = make_user(Role.ASSESSOR, username="ann")
    response = organizer.post(reverse("verdicts:organize"), {"topics": "t1", "assessor": ann.pk, "name": ""})
    assert response.status_code == 302
    work = AssessorWork.objects.get(kind=VERDICT_WORK)
    assert (work.topic_id, work.assessor, work.source.name, work.source.kind) == ("t1", ann, "people", "person")

    client = assessor_client(ann)
    queue = client.get(reverse("home")).content.decode()
    assert "Answer verdicts" in queue and "0 / 3 answers" in queue
    assert reverse("verdicts:judge", args=[work.pk]) in queue
    start = client.get(reverse("verdicts:judge", args=[work.pk]))
    assert start.url == reverse("verdicts:answer", args=[work.pk, 1])  # the first answer without a verdict
    pages = [client.get(reverse("verdicts:answer", args=[work.pk, n])).content.decode() for n in (1, 2, 3)]
    assert all("volcano eruption lava" in page for page in pages)
    texts = [text for (_, topic), answer in verdict_collection.items() if topic == "t1" for text in [answer.text]]
    assert sorted(text for text in texts for page in pages if text in page) == sorted(texts)  # an answer a page
    assert not any(">r1<" in page for page in pages)  # a page names its answer by position, never by run

    order = answer_order(work)
    by_answer = {answer.pk: (run, topic) for (run, topic), answer in verdict_collection.items()}
    chosen = {by_answer[answer_id][0]: label for answer_id, label in zip(order, ("yes", "no", "yes"), strict=True)}
    for number, label in enumerate(("yes", "no", "yes"), start=1):
        assert post_label(client, work, number, label).json()["label"] == label
    # A save made on a stale page (it showed no verdict) is refused with the current one.
    stale = post_label(client, work, 1, "no", previous="")
    assert stale.status_code == 409 and stale.json()["current"] == "yes"
    assert "3 / 3 answers" in client.get(reverse("home")).content.decode()

    # Open work does not count: no scores until the submit.
    assert not organizer.get(reverse("collection:leaderboards")).content.decode().count("?source=people")
    assert client.post(reverse("verdicts:submit", args=[work.pk]), {"version": work.version}).status_code == 302
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    verdicts = Verdict.objects.filter(source__name="people")
    assert {v.answer.run.run_id: v.label for v in verdicts} == chosen
    assert all(v.created_by == ann and v.work_id == work.pk and v.seconds_spent is not None for v in verdicts)
    board = organizer.get(reverse("labels:leaderboard", args=["verdicts"]), {"source": "people"}).content.decode()
    for run in chosen:
        assert f">{run}<" in board
    # Each run answered t1 once, and t1 is the only topic judged: its mean is its one verdict.
    means = {run: row["yes"] for run, row in AnswerScores(VERDICTS).scores(name="people").run_means.items()}
    assert means == {run: (1.0 if label == "yes" else 0.0) for run, label in chosen.items()}


def test_submit_is_refused_while_an_answer_has_no_verdict(organizer, verdict_collection):
    ann = make_user(Role.ASSESSOR, username="ann")
    organizer.post(reverse("verdicts:organize"), {"topics": "t2", "assessor": ann.pk})
    work = AssessorWork.objects.get(kind=VERDICT_WORK)
    client = assessor_client(ann)
    post_label(client, work, 1, "yes")
    response = client.post(reverse("verdicts:submit", args=[work.pk]), {"version": work.version}, follow=True)
    assert "2 answer(s) have no verdict yet." in response.content.decode()
    work.refresh_from_db()
    assert work.status != AssessorWork.Status.SUBMITTED
