"""An empty file is refused by every importer, by name, on the command line and the upload page."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.models import ImportBatch
from assessor.work.roles import Role
from tests.builders import make_user

pytestmark = pytest.mark.django_db

# Every import command, with the options it requires.
COMMANDS = [
    ("import_topics", []),
    ("import_segments", []),
    ("import_qrels", ["--source", "nist"]),
    ("import_run", []),
    ("import_nuggets", ["--kind", "manual"]),
    ("import_nuggets", ["--drafts"]),
    ("import_assignments", ["--nuggets", "auto", "--assigner", "manual"]),
    ("import_support", ["--method", "scratch"]),
    ("import_scores", ["--name", "table"]),
]


@pytest.mark.parametrize("content", ["", "\n\n", " \r\n\t\n", "\ufeff"], ids=["no-byte", "newlines", "blanks", "bom"])
@pytest.mark.parametrize(("command", "options"), COMMANDS, ids=[" ".join([c, *o]) for c, o in COMMANDS])
def test_a_command_refuses_an_empty_file_by_name(write_file, command, options, content):
    path = write_file("blank-input.txt", content)
    with pytest.raises(CommandError, match=r"blank-input\.txt: .*(empty|no scores)"):
        call_command(command, str(path), *options)
    assert ImportBatch.objects.count() == 0


@pytest.mark.parametrize("kind", ["topics", "segments", "qrels", "run", "nuggets", "assignments", "support", "scores"])
def test_the_upload_page_refuses_a_file_of_blank_lines_by_name(client, upload_worker, kind):
    client.force_login(make_user(Role.ORGANIZER))
    options = {"source": "nist", "nuggets_kind": "manual", "assigner_kind": "manual", "method_kind": "scratch", "scores_name": "t"}
    response = client.post(
        reverse("collection:upload"), {"kind": kind, "file": SimpleUploadedFile("blank.tsv", b"\n \n"), **options},
        follow=True,
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "blank.tsv" in page
    assert "empty" in page or "no scores" in page
    assert ImportBatch.objects.count() == 0
