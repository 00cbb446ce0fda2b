"""Uploads are jobs: the request keeps the file and queues it, a worker imports it, its page shows how far it got."""

import tracemalloc
from datetime import timedelta
from pathlib import Path

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from assessor.collection.importing.topics import topics_import
from assessor.collection.uploads import progress_write, upload_claim, upload_run
from assessor.importing.progress import ImportProgress, progress_watched
from assessor.models import ImportBatch, Qrel, Topic, Upload
from assessor.project.celery import app as celery_app
from tests.builders import make_topic

pytestmark = pytest.mark.django_db

UPLOAD = "/collection/upload/"


def post_upload(client, name: str, content: bytes, **fields):
    return client.post(UPLOAD, {"file": SimpleUploadedFile(name, content), **fields})


def topics_file(count: int, *, first: int = 1) -> bytes:
    return "".join(f"2024-{number}\tquery {number}\n" for number in range(first, first + count)).encode()


def row_counts() -> dict[str, int]:
    """The rows of every table but the uploads' own."""
    return {model._meta.label: model._default_manager.count() for model in apps.get_models() if model is not Upload}


def test_the_request_keeps_the_file_and_queues_it_without_importing(organizer, upload_queued, upload_dir):
    content = b"2024-1\tfirst query\n2024-2\tsecond query\n"
    response = post_upload(organizer, "topics.tsv", content, kind="topics", replace="on")
    upload = Upload.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("collection:upload_detail", args=[upload.pk])
    assert upload_queued == [upload.pk]
    assert Topic.objects.count() == 0
    assert (upload.kind, upload.file_name, upload.size, upload.state) == (
        "topics",
        "topics.tsv",
        len(content),
        "queued",
    )
    assert upload.options == {"replace": True}
    assert upload.created_by == response.wsgi_request.user
    assert (upload_dir / str(upload.pk) / "topics.tsv").read_bytes() == content
    page = organizer.get(response["Location"]).content.decode()
    assert 'id="upload-state">queued<' in page
    assert "Waiting for a worker." in page
    assert 'hx-trigger="every 1s"' in page


def test_the_options_recorded_are_the_chosen_kinds_own(organizer, upload_queued):
    post_upload(organizer, "grades.txt", b"2024-1 0 doc#1 2\n", kind="qrels", source="nist", nuggets_name="ignored")
    assert Upload.objects.get().options == {"replace": False, "source": "nist"}


def test_the_worker_imports_it_deletes_the_file_and_the_result_page_survives_a_reload(
    organizer, upload_worker, upload_dir
):
    response = organizer.post(
        UPLOAD, {"kind": "topics", "file": SimpleUploadedFile("topics.tsv", topics_file(3))}, follow=True
    )
    upload = Upload.objects.get()
    assert upload_worker == ["done"]
    assert upload.state == "done"
    assert upload.batch == ImportBatch.objects.get()
    assert (upload.lines, upload.created, upload.unchanged, upload.replaced) == (3, 3, 0, 0)
    assert not (upload_dir / str(upload.pk)).exists()
    for page in (
        response.content.decode(),
        organizer.get(reverse("collection:upload_detail", args=[upload.pk])).content.decode(),
    ):
        assert "Imported topics.tsv." in page
        assert "3 lines: 3 created, 0 unchanged, 0 replaced." in page
        assert "hx-trigger" not in page
    # The upload page lists it with its result.
    listing = organizer.get(UPLOAD).content.decode()
    assert f'<tr data-upload="{upload.pk}">' in listing
    assert "3 lines: 3 created, 0 unchanged, 0 replaced" in listing


def test_a_bad_line_after_written_rows_leaves_every_table_unchanged(organizer, upload_worker, upload_dir):
    make_topic("2024-1", query="query 1")
    before = row_counts()
    # 2,500 good lines (a first chunk of 2,000 is written before the bad line is read), then one without a query.
    content = topics_file(2500) + b"2024-9999\t \n"
    page = organizer.post(UPLOAD, {"kind": "topics", "file": SimpleUploadedFile("many.tsv", content)}, follow=True)
    page = page.content.decode()
    assert upload_worker == ["failed"]
    assert row_counts() == before
    upload = Upload.objects.get()
    assert (upload.state, upload.error_line, upload.error_field, upload.error) == ("failed", 2501, "query", "empty")
    assert "Nothing was imported." in page
    assert '<dt>File</dt><dd class="mono">many.tsv</dd>' in page
    assert "<dt>Line</dt><dd>2501</dd>" in page
    assert '<dt>Field</dt><dd class="mono">query</dd>' in page
    assert str(upload_dir) not in page
    # The file is kept for a retry.
    assert (upload_dir / str(upload.pk) / "many.tsv").stat().st_size == len(content)


def test_a_failed_upload_is_retried_on_the_kept_file_once_what_it_needs_is_stored(organizer, upload_worker, upload_dir):
    page = organizer.post(
        UPLOAD,
        {"kind": "qrels", "source": "nist", "file": SimpleUploadedFile("qrels.txt", b"2024-7 0 doc#1 2\n")},
        follow=True,
    ).content.decode()
    upload = Upload.objects.get()
    assert "unknown topic 2024-7 (import the topics first)" in page
    assert '<dt>Field</dt><dd class="mono">topic_id</dd>' in page
    make_topic("2024-7")
    page = organizer.post(reverse("collection:upload_retry", args=[upload.pk]), follow=True).content.decode()
    upload.refresh_from_db()
    assert upload_worker == ["failed", "done"]
    assert (upload.state, upload.attempts, upload.error) == ("done", 2, "")
    assert list(Qrel.objects.values_list("topic_id", "segment_id", "grade", "source__name")) == [
        ("2024-7", "doc#1", 2, "nist")
    ]
    assert "Imported qrels.txt." in page
    assert not (upload_dir / str(upload.pk)).exists()
    # A finished upload is not run again.
    page = organizer.post(reverse("collection:upload_retry", args=[upload.pk]), follow=True).content.decode()
    assert "only a failed or stalled upload is tried again" in page
    assert upload_worker == ["failed", "done"]


def test_a_second_delivery_of_the_task_skips_the_upload(organizer, upload_queued):
    post_upload(organizer, "topics.tsv", topics_file(2), kind="topics")
    [upload_id] = upload_queued
    assert upload_run(upload_id) == "done"
    assert upload_run(upload_id) == "skipped"
    assert Upload.objects.get().attempts == 1
    assert ImportBatch.objects.count() == 1


def test_an_import_reports_lines_read_and_rows_written_every_thousand_lines(write_file):
    reports = []
    progress = ImportProgress(report=lambda seen: reports.append((seen.lines, seen.rows)))
    path = write_file("topics.tsv", topics_file(2500).decode())
    with progress_watched(progress):
        topics_import(path=path)
    # Topics are written in chunks of 2,000 lines, after each chunk is read: none by line 2,000,
    # all 2,500 once the file is prepared (the import's own batch row is not counted).
    assert reports == [(1000, 0), (2000, 0), (2500, 2500)]


def test_the_page_shows_the_progress_the_worker_reports_while_it_runs(organizer, upload_queued, monkeypatch):
    post_upload(organizer, "topics.tsv", topics_file(2500), kind="topics")
    [upload_id] = upload_queued
    url = reverse("collection:upload_detail", args=[upload_id])
    seen = []

    def write_and_look(upload, progress):
        progress_write(upload, progress)
        seen.append(organizer.get(url, headers={"HX-Request": "true"}).content.decode())

    monkeypatch.setattr("assessor.collection.uploads.progress_write", write_and_look)
    upload_run(upload_id)
    assert len(seen) == 3
    assert '<strong id="lines-read">1000</strong> lines read' in seen[0]
    assert '<strong id="rows-written">0</strong> rows written' in seen[0]
    assert '<strong id="lines-read">2000</strong>' in seen[1]
    assert '<strong id="lines-read">2500</strong>' in seen[2]
    assert '<strong id="rows-written">2500</strong>' in seen[2]
    for panel in seen:
        assert 'id="upload-state">running<' in panel
        assert 'hx-trigger="every 1s"' in panel
    upload = Upload.objects.get()
    assert (upload.state, upload.lines_read, upload.rows_written) == ("done", 2500, 2500)


def test_a_finished_upload_polled_by_htmx_reloads_its_page(organizer, upload_worker):
    post_upload(organizer, "topics.tsv", topics_file(1), kind="topics")
    url = reverse("collection:upload_detail", args=[Upload.objects.get().pk])
    assert organizer.get(url, headers={"HX-Request": "true"})["HX-Refresh"] == "true"


def test_a_large_upload_is_streamed_to_disk_not_held_in_the_web_process(organizer, upload_queued, upload_dir, tmp_path):
    size = 50 << 20
    boundary = "b0undary-of-the-test"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="kind"\r\n\r\ntopics\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.tsv"\r\n'
        "Content-Type: text/tab-separated-values\r\n\r\n"
    ).encode()
    block = b"2024-1\ta query of some length, repeated\n" * ((1 << 20) // 40)
    block += b"x" * ((1 << 20) - len(block))
    body = tmp_path / "body"
    with body.open("wb") as handle:
        handle.write(head)
        for _ in range(size // len(block)):
            handle.write(block)
        handle.write(f"\r\n--{boundary}--\r\n".encode())
    # A first, small upload loads what any request loads once (the URLs, every app's views and their imports).
    post_upload(organizer, "small.tsv", topics_file(1), kind="topics")
    # The request body is read from disk as the server reads a socket, not built in memory by the test client.
    with body.open("rb") as stream:
        tracemalloc.start()
        try:
            response = organizer.generic(
                "POST",
                UPLOAD,
                **{
                    "wsgi.input": stream,
                    "CONTENT_LENGTH": str(body.stat().st_size),
                    "CONTENT_TYPE": f"multipart/form-data; boundary={boundary}",
                },
            )
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert response.status_code == 302
    upload = Upload.objects.get(file_name="big.tsv")
    assert upload.size == size
    assert Path(upload_dir / str(upload.pk) / "big.tsv").stat().st_size == size
    # Django reads uploads in chunks of 64 KiB: the peak is a few of those, not the file.
    assert peak < size / 20, f"the request allocated {peak:,} bytes at its peak for a {size:,}-byte file"


def test_the_upload_goes_to_the_worker_through_its_celery_task(
    organizer, upload_dir, django_capture_on_commit_callbacks
):
    # Celery's eager mode runs the task where it is sent: the real dispatch (task name, arguments), no broker.
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            response = post_upload(organizer, "topics.tsv", topics_file(2), kind="topics", replace="on")
    finally:
        celery_app.conf.task_always_eager = eager
    assert len(callbacks) == 1
    assert Upload.objects.get().state == "done"
    assert Topic.objects.count() == 2
    page = organizer.get(response["Location"]).content.decode()
    assert "replace: <code>True</code>" in page  # the options chosen


def test_an_upload_whose_worker_stopped_is_retried_once_it_showed_no_sign_of_life(
    organizer, upload_queued, settings, monkeypatch
):
    post_upload(organizer, "topics.tsv", topics_file(2), kind="topics")
    [upload_id] = upload_queued
    assert upload_claim(upload_id, worker="a-worker-that-was-stopped")
    url = reverse("collection:upload_detail", args=[upload_id])
    retry = reverse("collection:upload_retry", args=[upload_id])
    # Within the limit, a running upload is its worker's.
    page = organizer.post(retry, follow=True).content.decode()
    assert "only a failed or stalled upload is tried again" in page
    assert 'id="stalled"' not in page
    Upload.objects.filter(pk=upload_id).update(
        started_at=timezone.now() - timedelta(minutes=settings.UPLOAD_STALL_MINUTES, seconds=1)
    )
    assert 'id="stalled"' in organizer.get(url).content.decode()
    monkeypatch.setattr("assessor.collection.uploads.upload_queue", lambda upload: upload_run(upload.pk))
    page = organizer.post(retry, follow=True).content.decode()
    assert "Imported topics.tsv." in page
    upload = Upload.objects.get()
    assert (upload.state, upload.attempts, Topic.objects.count()) == ("done", 2, 2)
    assert upload.claimed_by != "a-worker-that-was-stopped"


def test_the_rows_a_failed_import_wrote_are_said_to_be_undone(organizer, upload_worker):
    content = topics_file(2500) + b"2024-9999\t \n"
    page = organizer.post(UPLOAD, {"kind": "topics", "file": SimpleUploadedFile("many.tsv", content)}, follow=True)
    # The first chunk of 2,000 topics was written, then the whole import rolled back at line 2,501.
    assert (
        '<strong id="lines-read">2501</strong> lines read,\n    and the <strong id="rows-written">2000</strong> '
        "rows written before the failure undone"
    ) in page.content.decode()
    assert Topic.objects.count() == 0
