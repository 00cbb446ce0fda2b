"""The upload page queues the importers: a summary on success, the place of the error on failure.

The worker's function imports each upload as soon as it is queued (the `upload_worker` fixture);
the page the upload redirects to shows its result.
"""

import dataclasses
import inspect
import json
import tempfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from assessor.collection import forms
from assessor.importing.base import ImportResult
from assessor.models import ImportBatch, Qrel, Topic
from assessor.registry import registry
from assessor.work.roles import Role
from tests.builders import make_topic, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("upload_worker")]

UPLOAD = "/collection/upload/"


@pytest.fixture
def organizer(client):
    client.force_login(make_user(Role.ORGANIZER))
    return client


def upload(client, name: str, content: str, **options):
    return client.post(
        reverse("collection:upload"), {"file": SimpleUploadedFile(name, content.encode()), **options}, follow=True
    )


def test_the_upload_page_offers_every_kind(organizer):
    page = organizer.get(reverse("collection:upload")).content.decode()
    assert reverse("collection:upload") == UPLOAD
    for kind in ("topics", "segments", "qrels", "run", "nuggets", "assignments", "support", "scores"):
        assert f'<option value="{kind}"' in page
    assert 'enctype="multipart/form-data"' in page


def test_uploading_topics_imports_them_and_shows_the_summary(organizer):
    response = upload(organizer, "topics.tsv", "2024-1\tfirst query\n2024-2\tsecond query\n", kind="topics")
    page = response.content.decode()
    assert response.status_code == 200
    assert dict(Topic.objects.values_list("id", "query")) == {"2024-1": "first query", "2024-2": "second query"}
    assert "Imported topics.tsv." in page
    assert "2 lines: 2 created, 0 unchanged, 0 replaced." in page
    # The batch remembers who uploaded it, under the uploaded file's name.
    batch = ImportBatch.objects.get()
    assert batch.file_name == "topics.tsv"
    assert batch.imported_by.username == response.wsgi_request.user.username


def test_a_bad_file_changes_nothing_and_names_line_and_field(organizer):
    make_topic("2024-1", query="first query")
    response = upload(organizer, "topics.tsv", "2024-2\tnew topic\n2024-1\tanother query\n", kind="topics")
    page = response.content.decode()
    assert set(Topic.objects.values_list("id", flat=True)) == {"2024-1"}
    assert ImportBatch.objects.count() == 0
    assert "Nothing was imported." in page
    assert '<dt>File</dt><dd class="mono">topics.tsv</dd>' in page
    assert "<dt>Line</dt><dd>2</dd>" in page
    assert '<dt>Field</dt><dd class="mono">query</dd>' in page
    # The server's temporary folder is not shown.
    assert tempfile.gettempdir() not in page


def test_replace_is_passed_to_the_importer(organizer):
    make_topic("2024-1", query="first query")
    upload(organizer, "topics.tsv", "2024-1\tanother query\n", kind="topics", replace="on")
    assert Topic.objects.get(id="2024-1").query == "another query"


def test_qrels_need_a_source(organizer):
    make_topic("2024-1")
    content = "2024-1 0 doc_a#0_0 2\n"
    response = upload(organizer, "qrels.txt", content, kind="qrels")
    assert "Required for qrels." in response.content.decode()
    assert Qrel.objects.count() == 0

    response = upload(organizer, "qrels.txt", content, kind="qrels", source="nist")
    assert list(Qrel.objects.values_list("topic_id", "segment_id", "grade", "source__name")) == [
        ("2024-1", "doc_a#0_0", 2, "nist")
    ]


def imports_with_warnings(*, path: Path, replace: bool = False, user=None, name: str, **options) -> ImportResult:
    """A stand-in importer: what the page shows of a result does not depend on the kind."""
    return ImportResult(
        path=str(path), lines=3, created=1, unchanged=2, warnings=[f"{path}: line 2: run {name} is unknown"]
    )


def test_the_warnings_of_an_import_are_shown(organizer, monkeypatch):
    monkeypatch.setitem(
        registry.importers, "scores", dataclasses.replace(registry.importers["scores"], function=imports_with_warnings)
    )
    response = upload(organizer, "table.tsv", "anything\n", kind="scores", scores_name="official")
    page = response.content.decode()
    assert "3 lines: 1 created, 2 unchanged, 0 replaced." in page
    assert "table.tsv: line 2: run official is unknown" in page


def test_a_kind_no_app_registered_is_neither_offered_nor_accepted(organizer, monkeypatch):
    monkeypatch.delitem(registry.importers, "support")
    page = organizer.get(reverse("collection:upload")).content.decode()
    assert "Support judgments" not in page
    response = upload(organizer, "support.jsonl", "{}\n", kind="support", method_kind="scratch")
    assert "Select a valid choice. support is not one of the available choices." in response.content.decode()


@pytest.mark.parametrize(
    ("kind", "options", "expected"),
    [
        ("qrels", {"source": "umbrela"}, {"source": "umbrela"}),
        (
            "nuggets",
            {"nuggets_kind": "manual", "nuggets_name": ""},
            {"kind": "manual", "name": None, "retire_labels": False},
        ),
        (
            "nuggets",
            {"nuggets_kind": "manual", "nuggets_name": "mine", "retire_labels": "on"},
            {"kind": "manual", "name": "mine", "retire_labels": True},
        ),
        (
            "assignments",
            {"nuggets_kind": "auto", "assigner_kind": "auto", "assigner_name": "gpt4o"},
            {
                "nuggets": "auto",
                "assigner": "auto",
                "nuggets_name": None,
                "assigner_name": "gpt4o",
                "run_id": None,
                "retire_labels": False,
            },
        ),
        (
            "assignments",
            {"nuggets_kind": "auto", "assigner_kind": "auto", "assigner_name": "", "run_id": "team.run1"},
            {
                "nuggets": "auto",
                "assigner": "auto",
                "nuggets_name": None,
                "assigner_name": None,
                "run_id": "team.run1",
                "retire_labels": False,
            },
        ),
        ("support", {"method_kind": "postedit", "method_name": ""}, {"method": "postedit", "method_name": None}),
        ("scores", {"scores_name": "official"}, {"name": "official", "layout": "tsv", "run_id": None}),
        (
            "scores",
            {"scores_name": "judge", "scores_layout": "trec_eval", "run_id": "sys1"},
            {"name": "judge", "layout": "trec_eval", "run_id": "sys1"},
        ),
    ],
)
def test_each_kind_calls_its_importer_with_the_interface_arguments(organizer, monkeypatch, kind, options, expected):
    calls = []

    def recorder(**kwargs):
        calls.append(kwargs)
        return ImportResult(path=str(kwargs["path"]))

    monkeypatch.setitem(registry.importers, kind, dataclasses.replace(registry.importers[kind], function=recorder))
    upload(organizer, "file.txt", "x\n", kind=kind, **options)
    [kwargs] = calls
    assert kwargs.pop("path").name == "file.txt"
    assert kwargs.pop("user").is_authenticated
    assert kwargs == {"replace": False, **expected}


OPTIONS_OF_EVERY_KIND = {
    "topics": {},
    "segments": {},
    "qrels": {"source": "nist"},
    "run": {},
    "nuggets": {"nuggets_kind": "draft", "nuggets_name": "drafts"},
    "assignments": {"nuggets_kind": "auto_edit", "assigner_kind": "auto", "nuggets_name": "", "assigner_name": "gpt"},
    "support": {"method_kind": "auto", "method_name": "gpt"},
    "scores": {"scores_name": "official"},
}


@pytest.mark.parametrize("kind", sorted(OPTIONS_OF_EVERY_KIND))
def test_the_installed_importers_accept_the_arguments_the_form_builds(kind):
    importer = registry.importer(kind).function
    form = forms.UploadForm({"kind": kind, **OPTIONS_OF_EVERY_KIND[kind]}, {"file": SimpleUploadedFile("f.txt", b"x")})
    assert form.is_valid(), form.errors
    inspect.signature(importer).bind(path=Path("f.txt"), user=None, **form.importer_kwargs())


def test_uploading_nuggets_makes_a_named_set(organizer):
    pytest.importorskip("nuggets.importing")
    from nuggets.models import NuggetSet

    make_topic("2024-1", query="how do bees see colour")
    record = {
        "qid": "2024-1",
        "query": "how do bees see colour",
        "nuggets": [
            {"text": "bees see ultraviolet", "importance": "vital"},
            {"text": "three photoreceptors", "importance": "okay"},
        ],
    }
    line = json.dumps(record) + "\n"
    response = upload(organizer, "nuggets.jsonl", line, kind="nuggets", nuggets_kind="manual", nuggets_name="mine")
    assert "Nothing was imported." not in response.content.decode()
    nugget_set = NuggetSet.objects.get()
    assert (nugget_set.topic_id, nugget_set.kind, nugget_set.name) == ("2024-1", "manual", "mine")
    assert list(nugget_set.nuggets.order_by("position").values_list("text", "importance")) == [
        ("bees see ultraviolet", "vital"),
        ("three photoreceptors", "okay"),
    ]
