import json

import pytest
from django.core.management import CommandError, call_command

from assessor.collection.importing.segments import segments_import
from assessor.importing.base import ImportFailure
from assessor.models import ImportBatch, Segment
from tests.builders import FIXTURES, make_segment

pytestmark = pytest.mark.django_db

COLLECTION = FIXTURES / "collection"


def stored_segments() -> dict[str, tuple[str, str, str]]:
    return {s.docid: (s.text, s.title, s.url) for s in Segment.objects.all()}


def jsonl(*records: dict) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def test_it_imports_the_text_under_any_of_its_three_names_with_crlf_and_bom(write_file):
    content = (
        '\ufeff{"docid": "d#0", "segment": "first text", "title": "A title", "url": "http://a.example"}\r\n'
        '{"docid": "d#1", "contents": "second text"}\r\n'
        "\r\n"
        '{"docid": "d#2", "text": "third text", "title": null}\r\n'
    )
    result = segments_import(path=write_file("segments.jsonl", content))
    assert stored_segments() == {
        "d#0": ("first text", "A title", "http://a.example"),
        "d#1": ("second text", "", ""),
        "d#2": ("third text", "", ""),
    }
    assert (result.lines, result.created, result.unchanged) == (3, 3, 0)
    assert Segment.objects.get(docid="d#0").imported_from == result.batch


def test_importing_the_same_file_twice_adds_nothing(write_file):
    path = write_file("segments.jsonl", jsonl({"docid": "d#0", "segment": "text"}, {"docid": "d#1", "segment": "more"}))
    segments_import(path=path)
    again = segments_import(path=path)
    assert (again.created, again.unchanged, again.replaced) == (0, 2, 0)
    assert Segment.objects.count() == 2
    assert ImportBatch.objects.count() == 1


def test_a_contradicting_text_is_an_error_unless_replace(write_file):
    call_command("import_segments", str(write_file("a.jsonl", jsonl({"docid": "d#0", "segment": "old"}))))
    changed = write_file("b.jsonl", jsonl({"docid": "d#9", "segment": "new row"}, {"docid": "d#0", "segment": "new"}))
    with pytest.raises(CommandError, match=r"b.jsonl, line 2, field 'segment': segment d#0 is stored with another text"):
        call_command("import_segments", str(changed))
    assert stored_segments() == {"d#0": ("old", "", "")}
    call_command("import_segments", str(changed), "--replace")
    assert stored_segments() == {"d#0": ("new", "", ""), "d#9": ("new row", "", "")}


def test_filling_a_placeholder_is_not_a_contradiction(write_file):
    make_segment("d#0", text="")  # as a qrels or run import leaves it
    result = segments_import(path=write_file("s.jsonl", jsonl({"docid": "d#0", "segment": "now with text", "url": "u"})))
    assert stored_segments() == {"d#0": ("now with text", "", "u")}
    assert (result.created, result.replaced) == (1, 0)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"docid": "d#1", "segment": "trunc', r"line 2: not valid JSON"),
        ('{"docid": "d#1"}', r"line 2, field 'segment': missing"),
        ('{"docid": "", "segment": "x"}', r"line 2, field 'docid': empty"),
        ('{"docid": 5, "segment": "x"}', r"line 2, field 'docid': expected str"),
        ('{"docid": "d#1", "segment": "  "}', r"line 2, field 'segment': empty text"),
        ('{"docid": "d#0", "segment": "other text"}', r"line 2, field 'docid': segment d#0 repeated with another text"),
        ('["d#1", "x"]', r"line 2: a line must hold a JSON object"),
    ],
)
def test_a_bad_line_names_its_place_and_changes_nothing(write_file, line, message):
    make_segment("stored#0", text="kept")
    path = write_file("bad.jsonl", '{"docid": "d#0", "segment": "fine"}\n' + line + "\n")
    with pytest.raises(ImportFailure, match=message) as failure:
        segments_import(path=path)
    assert failure.value.path == str(path)
    assert stored_segments() == {"stored#0": ("kept", "", "")}
    assert ImportBatch.objects.count() == 0


def test_a_repeated_line_with_the_same_text_is_harmless(write_file):
    path = write_file("s.jsonl", jsonl({"docid": "d#0", "segment": "x"}, {"docid": "d#0", "segment": "x"}))
    result = segments_import(path=path)
    assert (result.created, result.unchanged) == (1, 1)


def test_a_repetition_in_a_later_chunk_is_caught_too(write_file, monkeypatch):
    from assessor.collection.importing import segments
    from assessor.importing import base

    monkeypatch.setattr(segments, "chunked", lambda items: base.chunked(items, 2))
    path = write_file(
        "s.jsonl",
        jsonl({"docid": "d#0", "segment": "x"}, {"docid": "d#1", "segment": "y"}, {"docid": "d#0", "segment": "z"}),
    )
    with pytest.raises(ImportFailure, match=r"line 3, field 'docid': segment d#0 repeated in this file"):
        segments_import(path=path, replace=True)
    assert Segment.objects.count() == 0


def test_it_imports_the_real_slice():
    path = COLLECTION / "segments.jsonl"
    expected = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            expected[record["docid"]] = (record["segment"], "", "")
    segments_import(path=path)
    assert stored_segments() == expected
