"""Grade files in the reference's nugget-grades JSONL layout: an LLM's grades written and read back, graded
documents taking their highest grade, and bad lines refused by file, line and field with nothing imported."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from assessor.importing.base import ImportFailure
from assessor.jobs.engine import job_run_sync
from assessor.models import LabelSource
from grades.files import grades_import
from grades.kinds import GRADES_FAMILY
from grades.llm import grades_job_create
from grades.models import GradeLabel
from nuggets.banks import question_id
from tests.grades.conftest import BANK

pytestmark = pytest.mark.django_db


def grades_of(name: str) -> dict[tuple[str, str, str], int]:
    rows = GradeLabel.objects.filter(source__name=name).values_list(
        "topic_id", "answer__run__run_id", "nugget__text", "label"
    )
    return {(topic, run, question): label for topic, run, question, label in rows}


def write_lines(path, records) -> None:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def test_an_llms_grades_written_and_read_back(llm_server, qbank, tmp_path):
    job_run_sync(grades_job_create(name="llm", bank="qbank").pk)
    out = StringIO()
    call_command("export_grades", "--name", "llm", stdout=out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(records) == 20
    first = records[0]  # bee, run1, the bank's first question
    assert (first["run_id"], first["query_id"], first["question"]) == ("run1", "bee", BANK["bee"][0])
    assert first["nugget_id"] == question_id(BANK["bee"][0]) and first["passage"].startswith("Bees visit flowers")
    path = tmp_path / "llm.nugget-grades.jsonl"
    path.write_text(out.getvalue())
    result = grades_import(path=path, name="file", bank="qbank")
    assert (result.lines, result.created) == (20, 20)
    assert grades_of("file") == grades_of("llm")
    label = GradeLabel.objects.filter(source__name="file").first()
    assert label.imported_from_id is not None and label.job_id is None and label.created_by_id is None
    # Again: nothing changes.
    assert grades_import(path=path, name="file", bank="qbank").unchanged == 20


def test_graded_documents_give_a_question_its_highest_grade(qbank, tmp_path):
    common = {"run_id": "run2", "query_id": "leaf", "question": BANK["leaf"][0]}
    path = tmp_path / "docs.jsonl"
    write_lines(
        path,
        [
            {**common, "doc_id": "a", "grade": 2},
            {**common, "doc_id": "b", "grade": 4, "reasoning": "b says so"},
            {**common, "doc_id": "c", "grade": 3},
        ],
    )
    grades_import(path=path, name="docs", bank="qbank")
    label = GradeLabel.objects.get(source__name="docs")
    assert (label.label, label.document, label.reasoning) == (4, "b", "b says so")


@pytest.mark.parametrize(
    ("record", "line", "field", "message"),
    [
        (
            {"run_id": "run9", "query_id": "bee", "question": BANK["bee"][0], "grade": 3},
            2,
            "run_id",
            "no report of run",
        ),
        ({"run_id": "run1", "query_id": "bee", "question": "Who?", "grade": 3}, 2, "nugget_id", "not a question of"),
        ({"run_id": "run1", "query_id": "bee", "question": BANK["bee"][1], "grade": 7}, 2, "grade", "from 0 to 5"),
        ({"run_id": "run1", "query_id": "cloud", "question": "Why?", "grade": 1}, 2, "query_id", "no submitted bank"),
        ({"run_id": "run1", "query_id": "bee", "question": BANK["bee"][0], "grade": 1}, 2, "nugget_id", "on line 1"),
    ],
)
def test_a_bad_line_is_named_and_nothing_is_imported(qbank, tmp_path, record, line, field, message):
    path = tmp_path / "bad.jsonl"
    write_lines(
        path, [{"run_id": "run1", "query_id": "bee", "nugget_id": question_id(BANK["bee"][0]), "grade": 5}, record]
    )
    with pytest.raises(ImportFailure, match=message) as failure:
        grades_import(path=path, name="bad", bank="qbank")
    assert (failure.value.path, failure.value.line, failure.value.field) == (str(path), line, field)
    assert not GradeLabel.objects.exists() and not LabelSource.objects.filter(family=GRADES_FAMILY).exists()


def test_a_changed_grade_needs_replace(qbank, tmp_path):
    path = tmp_path / "g.jsonl"
    write_lines(path, [{"run_id": "run1", "query_id": "bee", "question": BANK["bee"][0], "grade": 5}])
    call_command("import_grades", str(path), "--name", "file", "--bank", "qbank", stdout=StringIO())
    write_lines(path, [{"run_id": "run1", "query_id": "bee", "question": BANK["bee"][0], "grade": 1}])
    with pytest.raises(CommandError, match="holds another grade"):
        call_command("import_grades", str(path), "--name", "file", "--bank", "qbank", stdout=StringIO())
    call_command("import_grades", str(path), "--name", "file", "--bank", "qbank", "--replace", stdout=StringIO())
    assert grades_of("file") == {("bee", "run1", BANK["bee"][0]): 1}
