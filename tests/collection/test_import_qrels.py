import pytest
from django.core.management import CommandError, call_command

from assessor.collection.importing.qrels import qrels_import
from assessor.importing.base import ImportFailure
from assessor.models import ImportBatch, Qrel, QrelSource, Segment
from tests.builders import FIXTURES, make_segment, make_topic

pytestmark = pytest.mark.django_db

COLLECTION = FIXTURES / "collection"


def stored_qrels() -> set[tuple[str, str, str, int]]:
    return set(Qrel.objects.values_list("source__name", "topic_id", "segment_id", "grade"))


def snapshot() -> tuple:
    return (
        stored_qrels(),
        set(QrelSource.objects.values_list("name", flat=True)),
        set(Segment.objects.values_list("docid", "text")),
        ImportBatch.objects.count(),
    )


@pytest.fixture
def topics():
    return [make_topic("2024-1", "first"), make_topic("2024-2", "second")]


def test_it_imports_grades_with_0_or_q0_and_any_whitespace(write_file, topics):
    make_segment("known#0", text="has text")
    path = write_file("q.txt", "2024-1 0 known#0 2\r\n2024-1\tQ0\tnew#1\t0\r\n\r\n2024-2   0  new#2   3\r\n")
    result = qrels_import(path=path, source="nist")
    assert stored_qrels() == {("nist", "2024-1", "known#0", 2), ("nist", "2024-1", "new#1", 0), ("nist", "2024-2", "new#2", 3)}
    assert (result.lines, result.created) == (3, 3)
    # Judged ids without text become placeholders; the stored text is left alone.
    assert dict(Segment.objects.values_list("docid", "text")) == {"known#0": "has text", "new#1": "", "new#2": ""}
    assert QrelSource.objects.get(name="nist").imported_from == result.batch


def test_several_sources_coexist(write_file, topics):
    call_command("import_qrels", str(write_file("nist.txt", "2024-1 0 d#0 1\n")), "--source", "nist")
    call_command("import_qrels", str(write_file("llm.txt", "2024-1 0 d#0 3\n")), "--source", "umbrela")
    assert stored_qrels() == {("nist", "2024-1", "d#0", 1), ("umbrela", "2024-1", "d#0", 3)}


def test_importing_the_same_file_twice_adds_nothing(write_file, topics):
    path = write_file("q.txt", "2024-1 0 d#0 1\n2024-2 0 d#1 0\n")
    qrels_import(path=path, source="nist")
    again = qrels_import(path=path, source="nist")
    assert (again.created, again.unchanged) == (0, 2)
    assert Qrel.objects.count() == 2
    assert ImportBatch.objects.count() == 1


def test_a_contradicting_grade_is_an_error_unless_replace(write_file, topics):
    call_command("import_qrels", str(write_file("a.txt", "2024-1 0 d#0 1\n")), "--source", "nist")
    changed = write_file("b.txt", "2024-2 0 d#5 2\n2024-1 0 d#0 3\n")
    with pytest.raises(CommandError, match=r"b.txt, line 2, field 'grade': nist grades d#0 for topic 2024-1 1, not 3"):
        call_command("import_qrels", str(changed), "--source", "nist")
    assert stored_qrels() == {("nist", "2024-1", "d#0", 1)}
    call_command("import_qrels", str(changed), "--source", "nist", "--replace")
    assert stored_qrels() == {("nist", "2024-1", "d#0", 3), ("nist", "2024-2", "d#5", 2)}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("2024-1 0 d#1 7", r"line 2, field 'grade': grade 7 is not in 0-3"),
        ("2024-1 0 d#1 -1", r"line 2, field 'grade': grade -1 is not in 0-3"),
        ("2024-1 0 d#1 two", r"line 2, field 'grade': not an integer"),
        ("2024-9 0 d#1 1", r"line 2, field 'topic_id': unknown topic 2024-9"),
        ("2024-1 0 d#1", r"line 2: expected 4 whitespace-separated fields"),
        ("2024-1 d#1 0 1", r"line 2, field 'Q0': expected 0 or Q0 in column 2"),
        ("2024-1 0 d#0 3", r"line 2, field 'grade': topic 2024-1 / d#0 repeated with grade 3 \(was grade 1 on line 1\)"),
    ],
)
def test_a_bad_line_names_its_place_and_changes_nothing(write_file, topics, line, message):
    make_segment("stored#0", text="kept")
    path = write_file("bad.txt", "2024-1 0 d#0 1\n" + line + "\n")
    before = snapshot()
    with pytest.raises(ImportFailure, match=message) as failure:
        qrels_import(path=path, source="nist")
    assert failure.value.path == str(path)
    assert snapshot() == before


def test_a_repetition_with_another_grade_in_a_later_chunk_is_caught(write_file, topics, monkeypatch):
    from assessor.collection.importing import qrels
    from assessor.importing import base

    monkeypatch.setattr(qrels, "chunked", lambda items: base.chunked(items, 2))
    path = write_file("q.txt", "2024-1 0 d#0 1\n2024-1 0 d#1 1\n2024-1 0 d#0 2\n")
    with pytest.raises(ImportFailure, match=r"line 3, field 'grade': topic 2024-1 / d#0 repeated with grade 2"):
        qrels_import(path=path, source="nist", replace=True)
    assert Qrel.objects.count() == 0


def test_the_same_line_twice_is_one_qrel(write_file, topics):
    result = qrels_import(path=write_file("q.txt", "2024-1 0 d#0 1\n2024-1 Q0 d#0 1\n"), source="nist")
    assert (result.created, result.unchanged, Qrel.objects.count()) == (1, 1, 1)


def test_a_source_name_must_be_a_slug(write_file, topics):
    with pytest.raises(ImportFailure, match="field 'source'"):
        qrels_import(path=write_file("q.txt", "2024-1 0 d#0 1\n"), source="nist 2024")
    assert QrelSource.objects.count() == 0


def test_an_empty_file_is_refused_and_leaves_no_source_behind(write_file):
    with pytest.raises(ImportFailure, match=r"q\.txt: the file is empty"):
        qrels_import(path=write_file("q.txt", "\n"), source="nist")
    assert (QrelSource.objects.count(), ImportBatch.objects.count()) == (0, 0)


def test_it_imports_the_real_slice():
    call_command("import_topics", str(COLLECTION / "topics.tsv"))
    path = COLLECTION / "qrels.txt"
    expected = set()
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            topic_id, _, docid, grade = line.split()
            expected.add(("nist", topic_id, docid, int(grade)))
    call_command("import_qrels", str(path), "--source", "nist")
    assert stored_qrels() == expected
    assert set(Segment.objects.values_list("docid", flat=True)) == {docid for _, _, docid, _ in expected}
