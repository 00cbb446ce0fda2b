"""Label exports with --provenance say who or what made each label, when, and the seconds spent."""

import io
import json
from datetime import UTC, datetime

import pytest
from django.core.management import call_command

from assessor.models import Citation, Job
from assessor.work.roles import Role
from assignment.models import AssignmentLabel
from support import kinds as support_kinds
from support.models import SupportLabel
from tests.builders import (
    make_answer,
    make_batch,
    make_nugget_set,
    make_run,
    make_segment,
    make_topic,
    make_user,
    nuggets_of,
    source_of,
)

pytestmark = pytest.mark.django_db
AT = datetime(2024, 11, 8, 12, 30, tzinfo=UTC)


def export(*args: str) -> list[dict]:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.fixture
def made():
    assessor = make_user(Role.ASSESSOR, username="alice")
    batch = make_batch(file_name="nist.jl")
    # A finished job: the labels of a running one are provisional and not exported.
    job = Job.objects.create(
        kind=support_kinds.AUTO_SUPPORT, output_name="auto", model="m", endpoint_name="local", status=Job.Status.DONE
    )
    topic = make_topic("2024-1")
    segment = make_segment("doc#0_0")
    nuggets = nuggets_of(make_nugget_set(topic, importances=["vital", "okay"], batch=batch))
    answer = make_answer(make_run("r1"), topic, [("One.", [segment]), ("Two.", [segment])])
    AssignmentLabel.objects.create(
        answer=answer, nugget=nuggets[0], assigner="manual", source=source_of("assignment", "manual", kind="person"), assigner_kind="manual", label="support",
        created_by=assessor, created_at=AT, seconds_spent=12.5,
    )  # fmt: skip
    AssignmentLabel.objects.create(
        answer=answer, nugget=nuggets[1], assigner="manual", source=source_of("assignment", "manual"), assigner_kind="manual", label="not_support",
        imported_from=batch, created_at=AT,
    )  # fmt: skip
    first, second = Citation.objects.filter(sentence__answer=answer).order_by("sentence__index")
    shown = SupportLabel.objects.create(
        citation=first,
        method="auto",
        source=source_of("support", "auto", kind="llm"),
        method_kind="auto",
        label=1,
        job=job,
        created_at=AT,
    )
    SupportLabel.objects.create(
        citation=first, method="postedit", source=source_of("support", "postedit", kind="person"), method_kind="postedit", label=2, shown_label=1, shown_from=shown,
        created_by=assessor, created_at=AT, seconds_spent=4.0,
    )  # fmt: skip
    SupportLabel.objects.create(
        citation=second,
        method="auto",
        source=source_of("support", "auto", kind="llm"),
        method_kind="auto",
        label=0,
        job=job,
        created_at=AT,
    )
    return {"job": job}


def test_assignment_export_names_the_person_and_the_file(made):
    (line,) = export("export_assignments", "--nuggets", "auto_edit", "--assigner", "manual", "--provenance")
    person, imported = line["nuggets"]
    assert person["provenance"] == {"made_by": "user:alice", "at": "2024-11-08T12:30:00+00:00", "seconds": 12.5}
    assert imported["provenance"] == {"made_by": "file:nist.jl", "at": "2024-11-08T12:30:00+00:00"}


def test_support_export_names_the_job_and_the_label_shown(made):
    (auto,) = export("export_support", "--method", "auto", "--provenance")
    job = made["job"].pk
    assert [s["citations"][0]["provenance"]["made_by"] for s in auto["sentences"]] == [f"job:{job}", f"job:{job}"]
    # A job's label names the endpoint and model that made it.
    assert auto["sentences"][0]["citations"][0]["provenance"] == {
        "made_by": f"job:{job}", "at": "2024-11-08T12:30:00+00:00", "endpoint": "local", "model": "m",
    }  # fmt: skip
    (postedit,) = export("export_support", "--method", "postedit", "--provenance")
    first = postedit["sentences"][0]["citations"][0]
    assert first["support"] == "2"
    assert first["provenance"] == {
        "made_by": "user:alice", "at": "2024-11-08T12:30:00+00:00", "seconds": 4.0, "shown": "1",
    }  # fmt: skip
    assert "provenance" not in postedit["sentences"][1]["citations"][0]


def test_without_the_flag_the_formats_stay_nists(made):
    (line,) = export("export_assignments", "--nuggets", "auto_edit", "--assigner", "manual")
    assert len(line["nuggets"]) == 2  # alice's label and the file's
    assert all(set(nugget) == {"text", "importance", "assignment"} for nugget in line["nuggets"])


def test_an_export_with_provenance_imports_back(made, tmp_path):
    path = tmp_path / "with-provenance.jsonl"
    call_command("export_support", "--method", "postedit", "--provenance", "--output", str(path))
    call_command("import_support", str(path), "--method", "postedit", "--name", "again")
    labels = dict(SupportLabel.objects.filter(method="again").values_list("citation__sentence__index", "label"))
    assert labels == {0: 2}
