"""Requests and reports through the upload page and its worker, as an organizer sends them from the browser."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from assessor.models import Answer, ImportBatch
from reports.models import ReportRequest
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("upload_worker")]


def upload(client, name: str, content: bytes, kind: str):
    return client.post(
        reverse("collection:upload"), {"file": SimpleUploadedFile(name, content), "kind": kind}, follow=True
    )


def test_kiddie_requests_then_reports_upload(organizer):
    page = upload(organizer, "kiddie-topics.jsonl", KIDDIE_TOPICS.read_bytes(), "report_requests").content.decode()
    assert "5 lines: 5 created, 0 unchanged, 0 replaced." in page
    assert ReportRequest.objects.count() == 5
    page = upload(organizer, "run1.jsonl", KIDDIE_RUNS[0].read_bytes(), "reports").content.decode()
    assert "5 lines: 5 created, 0 unchanged, 0 replaced." in page
    assert Answer.objects.filter(run__run_id="run1").count() == 5


def test_a_bad_report_upload_names_its_line_and_field(organizer):
    upload(organizer, "kiddie-topics.jsonl", KIDDIE_TOPICS.read_bytes(), "report_requests")
    bad = b'{"metadata": {"team_id": "t", "run_id": "r", "topic_id": "leaf"}, "responses": [{"text": "a", "citations": [0]}]}\n'
    page = upload(organizer, "bad.jsonl", bad, "reports").content.decode()
    assert "Nothing was imported." in page
    assert "<dt>Line</dt><dd>1</dd>" in page
    assert '<dt>Field</dt><dd class="mono">references</dd>' in page
    assert not Answer.objects.exists()
    assert ImportBatch.objects.count() == 1  # the requests' only
