"""ARGUE-style judgments both ways: `import_argue` reads what `export_argue` writes (through the one import
pipeline: errors by file, line and field, nothing half-written, replace rules), and `export_argue --scores`
writes the score TSV, on the hand-made collection of tests/argue/flow.py (figures worked by hand in
test_argue_flow.py's test_the_scores_of_the_flow_worked_by_hand, restated here)."""

import hashlib
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from argue.files import argue_import
from argue.llm import argue_job_create
from argue.models import AnswerAttestation, JudgedReport, SupportAttestation, UncitedAttestation
from argue.scoring import argue_scores, argue_scores_from_labels
from assessor.importing.base import ImportFailure
from assessor.jobs.engine import job_run_sync
from assessor.models import ImportBatch, LabelSource
from tests.argue.flow import flow_collection_make
from tests.builders import read_scores_tsv

pytestmark = pytest.mark.django_db

WHO = hashlib.md5(b"Who led the team?").hexdigest()


@pytest.fixture
def exported(llm_server, db, tmp_path):
    """The LLM's judgments of f1, f2 and f3, as export_argue writes them, in a file."""
    flow_collection_make()
    job_run_sync(argue_job_create(name="llm", bank="gold", topics=["f1", "f2", "f3"]).pk)
    out = StringIO()
    call_command("export_argue", "--name", "llm", stdout=out)
    path = tmp_path / "argue.jsonl"
    path.write_text(out.getvalue())
    return path


def lines_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def written(path, records: list[dict]):
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_what_export_argue_writes_imports_to_the_same_judgments_and_scores(exported):
    out = StringIO()
    call_command("import_argue", str(exported), "--name", "copy", "--bank", "gold", stdout=out)
    # A/f1, A/f2, A/f3 and B/f1: four judged reports
    assert out.getvalue().strip() == f"{exported}: 4 lines, 4 created, 0 unchanged, 0 replaced"
    source = LabelSource.objects.get(family="argue", name="copy")
    assert source.kind == LabelSource.Kind.FILE
    batch = ImportBatch.objects.get(kind="argue_file")
    # Every row made by the file: A/f1's 2 citations, f2's, f3's and B's 1 each; answers 2 + 2 + 1; uncited 5.
    for model, count in ((SupportAttestation, 5), (AnswerAttestation, 5), (UncitedAttestation, 5), (JudgedReport, 4)):
        rows = model.objects.filter(source=source)
        assert rows.count() == count and set(rows.values_list("imported_from", flat=True)) == {batch.pk}
    again = StringIO()
    call_command("export_argue", "--name", "copy", stdout=again)
    assert again.getvalue() == exported.read_text()
    original, copy = argue_scores_from_labels(name="llm"), argue_scores_from_labels(name="copy")
    assert copy.per_topic == original.per_topic and copy.run_means == original.run_means
    # By hand (test_argue_flow): A's F1 (1/2 + 1)/2, B's 1/2; f3 not scored.
    assert (copy.run_means["A"]["f1"], copy.run_means["B"]["f1"], copy.topics) == (3 / 4, 1 / 2, ["f1", "f2"])
    # The same file again changes nothing.
    result = argue_import(path=exported, name="copy", bank="gold")
    assert (result.created, result.unchanged, result.replaced) == (0, 4, 0)


def test_a_file_judging_answers_its_citations_would_not_ask_is_recorded_check_all(exported):
    records = lines_of(exported)
    b_f1 = next(r for r in records if (r["run_id"], r["topic_id"]) == ("B", "f1"))
    f2 = next(r for r in records if r["topic_id"] == "f2")
    # B's sentence cites d1, whose answer is Ann: judged as is; then a line of f2 (ungated: never check_all).
    written(exported, [b_f1, f2])
    argue_import(path=exported, name="gated", bank="gold")
    assert set(JudgedReport.objects.filter(source__name="gated").values_list("check_all", flat=True)) == {False}
    # Zed (no document) judged too: only every-answer judging asks it.
    b_f1["sentences"][0]["answers"].append({"question_id": WHO, "answer_index": 1, "agrees": "no"})
    written(exported, [b_f1])
    argue_import(path=exported, name="all", bank="gold")
    assert JudgedReport.objects.get(source__name="all").check_all is True


@pytest.mark.parametrize(
    ("change", "line", "field", "message"),
    [
        (lambda r: r["sentences"][0]["citations"][0].update(supports="maybe"), 2, "sentences[0].citations[0].supports",
         'expected "yes" or "no"'),
        (lambda r: r["sentences"][0]["citations"][0].update(docid="d4"), 2, "sentences[0].citations[0].docid",
         "does not cite 'd4'"),
        (lambda r: r["sentences"][0].update(index=7), 2, "sentences[0].index", "1 sentence(s) kept"),
        (lambda r: r["sentences"][0]["answers"][0].update(question_id="Who?"), 2, "sentences[0].answers[0].question_id",
         "not a question of the bank"),
        (lambda r: r["sentences"][0]["answers"][0].update(answer_index=5), 2, "sentences[0].answers[0].answer_index",
         "2 gold answer(s)"),
        (lambda r: r["sentences"][0].update(needs_citation="yes"), 2, "sentences[0].needs_citation",
         "cites documents is not asked"),
        (lambda r: r["sentences"][0].update(first_instance=1), 2, "sentences[0].first_instance", '"yes", "no" or ""'),
        (lambda r: r.update(run_id="Z"), 2, "run_id", "no report of run 'Z'"),
        (lambda r: r.update(sentences={}), 2, "sentences", "expected a list"),
    ],
)  # fmt: skip
def test_a_bad_line_is_named_by_file_line_and_field_and_nothing_is_written(exported, change, line, field, message):
    records = lines_of(exported)
    good = next(r for r in records if r["topic_id"] == "f2")
    bad = next(r for r in records if (r["run_id"], r["topic_id"]) == ("B", "f1"))
    change(bad)
    written(exported, [good, bad])
    with pytest.raises(ImportFailure) as failure:
        argue_import(path=exported, name="copy", bank="gold")
    assert (failure.value.line, failure.value.field) == (line, field) and message in failure.value.message
    assert str(exported) in str(failure.value)
    assert not LabelSource.objects.filter(name="copy").exists()
    assert not JudgedReport.objects.filter(source__name="copy").exists()
    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command("import_argue", str(exported), "--name", "copy", "--bank", "gold", stdout=StringIO())


def test_a_report_judged_otherwise_is_refused_unless_replaced_and_never_twice_in_a_file(exported):
    argue_import(path=exported, name="copy", bank="gold")
    records = lines_of(exported)
    b_f1 = next(r for r in records if (r["run_id"], r["topic_id"]) == ("B", "f1"))
    b_f1["sentences"][0]["citations"][0]["supports"] = "no"
    written(exported, [b_f1])
    with pytest.raises(ImportFailure, match="holds other judgments of this report"):
        argue_import(path=exported, name="copy", bank="gold")
    result = argue_import(path=exported, name="copy", bank="gold", replace=True)
    assert (result.created, result.replaced) == (0, 1)
    # B's one citation no: penalized, its Ann earns nothing; B's F1 on f1 is 0 now.
    assert argue_scores_from_labels(name="copy").per_topic[("B", "f1")]["f1"] == 0
    assert (
        SupportAttestation.objects.filter(source__name="copy", citation__sentence__answer__run__run_id="B").count() == 1
    )
    written(exported, [b_f1, b_f1])
    with pytest.raises(ImportFailure, match="judged on line 1 already") as failure:
        argue_import(path=exported, name="other", bank="gold")
    assert failure.value.line == 2


def test_export_argue_scores_writes_the_score_tsv(exported):
    out, err = StringIO(), StringIO()
    call_command("export_argue", "--name", "llm", "--scores", stdout=out, stderr=err)
    table = read_scores_tsv(out.getvalue())
    # By hand (test_argue_flow): A on f1 support 1/3, F1 1/2; A's all F1 (1/2 + 1)/2, micro F1 2/3; B all 1/2.
    assert table["A", "f1", "sentence_support"] == pytest.approx(1 / 3)
    assert table["A", "f1", "f1"] == pytest.approx(1 / 2) and table["A", "f1", "penalized"] == 2
    assert table["A", "all", "f1"] == pytest.approx(3 / 4)
    assert table["A", "all", "f1_micro"] == pytest.approx(2 / 3)
    assert table["B", "all", "f1"] == pytest.approx(1 / 2)
    assert not any(topic == "f3" for _, topic, _ in table)  # not scored
    assert "f3" in err.getvalue()  # the note, on standard error
    # The kept scores (what the leaderboard reads) are what the file holds.
    assert argue_scores(name="llm").run_means["A"]["f1_micro"] == pytest.approx(2 / 3)
    skipped = StringIO()
    call_command("export_argue", "--name", "llm", "--scores", "--skip-missing", stdout=skipped)
    assert read_scores_tsv(skipped.getvalue())["B", "all", "f1"] == 1
    with pytest.raises(CommandError, match="--format: options of a score file"):
        call_command("export_argue", "--name", "llm", "--format", "trec_eval", stdout=StringIO())
