"""A grade file imported under a name outside the rule of names is refused, and the pages stay up.

Imported under `g/x` (before the rule applied to every import), the grades broke the
leaderboards' index and every run page (500: the name's `/` split a score column) and
the grade leaderboard (500: no address for a download of `g/x`).
"""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.models import ImportBatch, LabelSource, Run
from grades.models import GradeLabel
from tests.grades.conftest import BANK

pytestmark = pytest.mark.django_db

PAGES = ["collection:leaderboards", "collection:grade_leaderboard", "collection:runs"]


def pages_status(client) -> dict[str, int]:
    shown = {name: client.get(reverse(name)).status_code for name in PAGES}
    for run in Run.objects.order_by("run_id"):
        shown[run.run_id] = client.get(reverse("collection:run", args=[run.run_id])).status_code
    return shown


@pytest.fixture
def grade_file(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"run_id": "run1", "query_id": "bee", "question": BANK["bee"][0], "grade": 5}) + "\n")
    return path


def test_a_grade_file_under_a_slashed_name_is_refused_and_the_pages_answer(organizer, qbank, grade_file):
    batches = ImportBatch.objects.count()
    with pytest.raises(CommandError) as refusal:
        call_command("import_grades", str(grade_file), "--name", "g/x", "--bank", "qbank", stdout=StringIO())
    assert str(refusal.value) == (
        "--name: 'g/x' holds '/': a name is 1 to 100 characters, each a-z, A-Z, 0-9, '-' or '_'\nNothing was imported."
    )
    assert not GradeLabel.objects.exists()
    assert not LabelSource.objects.filter(family="grades").exists()
    assert ImportBatch.objects.count() == batches
    shown = pages_status(organizer)
    assert set(shown.values()) == {200} and len(shown) > len(PAGES)


def test_the_same_file_under_a_name_within_the_rule_is_shown(organizer, qbank, grade_file):
    call_command("import_grades", str(grade_file), "--name", "g-x", "--bank", "qbank", stdout=StringIO())
    assert GradeLabel.objects.filter(source__name="g-x").count() == 1
    shown = pages_status(organizer)
    assert set(shown.values()) == {200} and len(shown) > len(PAGES)
    assert "g-x" in organizer.get(reverse("collection:grade_leaderboard")).content.decode()
