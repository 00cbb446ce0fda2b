"""Deleting a mistaken upload: a confirmation page, a refusal that says why, and an audit entry."""

import re

import pytest
from django.urls import reverse

from assessor.models import AssessorWork, AuditEntry, Job, LabelSource, Qrel, QrelSource
from assessor.work.roles import Role
from metaeval.models import ImportedScore, ScoreTable
from nuggets import kinds as nugget_kinds
from nuggets.models import Nugget, NuggetSet
from tests.builders import (
    make_answer,
    make_assignment_label,
    make_nugget_set,
    make_qrel,
    make_run,
    make_segment,
    make_topic,
    make_user,
    nuggets_of,
)

pytestmark = pytest.mark.django_db


def delete_url(kind: str, name: str) -> str:
    return reverse("collection:upload_delete", args=[kind, name])


def uploads_listed(page: str, kind: str) -> dict[str, str]:
    table = re.search(rf'<table class="uploads" data-kind="{kind}">(.*?)</table>', page, re.S)
    assert table, kind
    rows = re.findall(r'<tr data-name="([\w-]+)">.*?<td>(.*?)</td>\s*<td>(.*?)</td>', table.group(1), re.S)
    return {name: f"{summary} | {re.sub(r'<[^>]+>', '', action)}" for name, summary, action in rows}


def test_the_upload_page_lists_uploads_with_a_delete_link_or_the_reason_they_stay(organizer):
    topic = make_topic()
    make_qrel(topic, make_segment(), grade=2, source="mistake")
    make_qrel(topic, make_segment(), grade=0, source="mistake")
    used = make_nugget_set(topic, name="used")
    make_assignment_label(make_answer(make_run(), topic), nuggets_of(used)[0], "support")
    make_nugget_set(topic, name="spare", texts=["one", "two"])
    page = organizer.get(reverse("collection:upload")).content.decode()
    assert uploads_listed(page, "qrels") == {"mistake": "2 grades | Delete…"}
    assert uploads_listed(page, "nuggets") == {
        "spare": "1 topic, 2 nuggets | Delete…",
        "used": "1 topic, 1 nugget | kept: 1 assignment label on its nuggets",
    }


def test_a_qrels_source_is_deleted_after_confirmation_and_the_deletion_is_audited(client):
    boss = make_user(Role.ORGANIZER, username="boss")
    client.force_login(boss)
    topic = make_topic()
    make_qrel(topic, make_segment(), grade=2, source="mistake")
    make_qrel(topic, make_segment(), grade=1, source="nist")
    confirm = client.get(delete_url("qrels", "mistake")).content.decode()
    assert "all it holds: <strong>1 grade</strong>" in confirm
    assert QrelSource.objects.filter(name="mistake").exists()
    response = client.post(delete_url("qrels", "mistake"), follow=True)
    assert "Deleted the qrels source mistake (1 grade)." in response.content.decode()
    assert list(QrelSource.objects.values_list("name", flat=True)) == ["nist"]
    assert Qrel.objects.count() == 1
    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.actor_name, entry.action, entry.target, entry.detail) == (
        boss, "boss", "upload_delete", "qrels source mistake", "1 grade"
    )  # fmt: skip


def test_a_qrels_source_a_job_read_is_refused_with_the_reason(organizer):
    make_qrel(make_topic(), make_segment(), grade=2, source="umbrela")
    job = Job.objects.create(kind=nugget_kinds.AUTO_NUGGETS, output_name="auto", params={"qrels": "umbrela"})
    confirm = organizer.get(delete_url("qrels", "umbrela")).content.decode()
    reason = f"LLM jobs read it: #{job.pk} (what they made came from these grades)"
    assert reason in confirm and "<button" not in confirm.split("<main>")[1]
    response = organizer.post(delete_url("qrels", "umbrela"))
    assert response.status_code == 409 and reason in response.content.decode()
    assert QrelSource.objects.filter(name="umbrela").exists()
    assert not AuditEntry.objects.exists()


def test_a_nugget_set_with_labels_is_refused_and_one_without_is_deleted_on_every_topic(organizer):
    first, second = make_topic(), make_topic()
    make_nugget_set(first, name="spare", texts=["a", "b"])
    make_nugget_set(second, name="spare", texts=["c"])
    used = make_nugget_set(first, name="used")
    make_assignment_label(make_answer(make_run(), first), nuggets_of(used)[0], "support")
    refused = organizer.post(delete_url("nuggets", "used"))
    assert refused.status_code == 409
    assert "1 assignment label on its nuggets" in refused.content.decode()
    organizer.post(delete_url("nuggets", "spare"))
    assert list(NuggetSet.objects.values_list("name", flat=True)) == ["used"]
    assert Nugget.objects.count() == 1
    assert AuditEntry.objects.get().detail == "2 topics, 3 nuggets"


def test_a_score_table_is_deleted_with_its_scores(organizer):
    table = ScoreTable.objects.create(name="official")
    for metric in ("V", "A", "W"):
        ImportedScore.objects.create(table=table, run_id="r1", topic_id="all", metric=metric, value=0.5)
    organizer.post(delete_url("scores", "official"))
    assert not ScoreTable.objects.exists() and not ImportedScore.objects.exists()
    assert AuditEntry.objects.get().target == "score table official"


def test_an_unknown_upload_is_a_404_that_says_so(organizer):
    response = organizer.get(delete_url("qrels", "nobody"))
    assert response.status_code == 404
    assert "There is no upload of kind &#x27;qrels&#x27; named &#x27;nobody&#x27;" in response.content.decode()


def test_assessors_cannot_delete(client):
    make_qrel(make_topic(), make_segment(), source="mistake")
    client.force_login(make_user(Role.ASSESSOR))
    assert client.post(delete_url("qrels", "mistake")).status_code == 403
    assert QrelSource.objects.filter(name="mistake").exists()


def test_the_nist_qrels_stay_while_assessors_make_nuggets_from_them(organizer):
    topic = make_topic()
    make_qrel(topic, make_segment(), grade=2, source="nist")
    make_qrel(topic, make_segment(), grade=2, source="other")
    AssessorWork.objects.create(topic=topic, assessor=make_user(), kind=nugget_kinds.NUGGETS_MANUAL)
    page = organizer.get(reverse("collection:upload")).content.decode()
    assert uploads_listed(page, "qrels") == {
        "nist": "1 grade | kept: assessors&#x27; nugget work reads its relevant segments (1 topic)",
        "other": "1 grade | Delete…",
    }
    assert organizer.post(delete_url("qrels", "nist")).status_code == 409
    assert QrelSource.objects.filter(name="nist").exists()


def test_a_deleted_upload_frees_its_name_for_a_corrected_file(organizer):
    make_qrel(make_topic(), make_segment(), grade=2, source="mistake")
    make_nugget_set(make_topic(), name="spare")
    assert set(LabelSource.objects.values_list("family", "name")) >= {("qrels", "mistake"), ("nuggets", "spare")}
    organizer.post(delete_url("qrels", "mistake"))
    organizer.post(delete_url("nuggets", "spare"))
    assert not LabelSource.objects.filter(name__in=["mistake", "spare"]).exists()
