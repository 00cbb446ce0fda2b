"""Report requests and reports in the AutoJudge layouts: import, checks, and export back."""

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from assessor.importing.base import ImportFailure
from assessor.models import Answer, AnswerReference, Citation, ImportBatch, Run, Segment, Sentence, Topic
from reports.exporting import reports_lines, requests_lines
from reports.importing import reports_import, requests_import
from reports.models import ReportDocument, ReportLayout, ReportRequest
from tests.builders import make_topic
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

pytestmark = pytest.mark.django_db


def jsonl(*records: dict) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def report(topic_id: str = "leaf", run_id: str = "r1", **overrides) -> dict:
    record = {
        "metadata": {"team_id": "team", "run_id": run_id, "topic_id": topic_id},
        "responses": [
            {"text": "Leaves are green from chlorophyll.", "citations": ["d1", "d2"]},
            {"text": "No citation here.", "citations": []},
            {"text": "Red comes from anthocyanin.", "citations": ["d3"]},
        ],
    }
    record.update(overrides)
    return record


def stored(run_id: str, topic_id: str) -> tuple[list[str], list[tuple[str, list[tuple[str, int | None]]]]]:
    """An answer's references, and each sentence's text with its citations (docid, reference rank) in order."""
    answer = Answer.objects.get(run__run_id=run_id, topic_id=topic_id)
    return (
        list(AnswerReference.objects.filter(answer=answer).order_by("rank").values_list("segment_id", flat=True)),
        [
            (
                s.text,
                list(
                    Citation.objects.filter(sentence=s).order_by("position").values_list("segment_id", "reference_rank")
                ),
            )
            for s in Sentence.objects.filter(answer=answer).order_by("index")
        ],
    )


def snapshot() -> tuple:
    return (
        set(Topic.objects.values_list("id", "query")),
        set(ReportRequest.objects.values_list("topic_id", "title", "limit", "word_limit")),
        set(Run.objects.values_list("run_id", flat=True)),
        set(Answer.objects.values_list("run__run_id", "topic_id", "text")),
        Citation.objects.count(),
        set(Segment.objects.values_list("docid", "text")),
        ReportLayout.objects.count(),
        ReportDocument.objects.count(),
        ImportBatch.objects.count(),
    )


@pytest.fixture
def kiddie_requests() -> None:
    requests_import(path=KIDDIE_TOPICS)


# --- requests -----------------------------------------------------------------------------------------------


def test_kiddie_requests_become_topics_with_their_fields(kiddie_requests):
    lines = [json.loads(line) for line in KIDDIE_TOPICS.read_text().splitlines()]
    assert [line["request_id"] for line in lines] == ["leaf", "cloud", "bee", "earthworms", "hibernation"]
    for line in lines:
        topic = Topic.objects.get(id=line["request_id"])
        assert topic.query == line["title"]
        request = ReportRequest.objects.get(topic=topic)
        assert (request.background, request.problem_statement) == (line["background"], line["problem_statement"])
        assert request.length_limit is None


def test_a_trec_topic_with_the_title_as_query_gains_the_request(write_file):
    make_topic("2024-1", query="what is a nugget")
    result = requests_import(
        path=write_file("r.jsonl", jsonl({"request_id": "2024-1", "title": "what is a nugget", "word_limit": 250}))
    )
    assert (result.created, Topic.objects.count()) == (1, 1)
    assert ReportRequest.objects.get(topic_id="2024-1").length_limit == (250, "words")


def test_a_request_whose_title_is_not_the_topics_query_is_refused(write_file):
    make_topic("2024-1", query="what is a nugget")
    path = write_file("r.jsonl", jsonl({"request_id": "2024-1", "title": "another title"}))
    with pytest.raises(ImportFailure) as failure:
        requests_import(path=path)
    assert (failure.value.line, failure.value.field) == (1, "title")
    assert not ReportRequest.objects.exists()
    requests_import(path=path, replace=True)
    assert Topic.objects.get(id="2024-1").query == "another title"


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"title": "t"}, "request_id"),
        ({"request_id": "a b", "title": "t"}, "request_id"),
        ({"request_id": "a", "title": ""}, "title"),
        ({"request_id": "a", "title": "t", "limit": -5}, "limit"),
        ({"request_id": "a", "title": "t", "word_limit": "400"}, "word_limit"),
        ({"request_id": "a", "title": "t", "topic_id": "b"}, "topic_id"),
        ({"request_id": "a", "title": "t", "background": 3}, "background"),
    ],
)
def test_bad_requests_are_named_by_line_and_field_and_nothing_is_written(write_file, record, field):
    path = write_file("r.jsonl", jsonl({"request_id": "ok", "title": "fine"}, record))
    before = snapshot()
    with pytest.raises(ImportFailure) as failure:
        requests_import(path=path)
    assert (failure.value.line, failure.value.field) == (2, field)
    assert snapshot() == before


def test_requests_export_reads_back_as_the_file(kiddie_requests, write_file):
    exported = [json.loads(line) for line in requests_lines()]
    given = sorted((json.loads(line) for line in KIDDIE_TOPICS.read_text().splitlines()), key=lambda r: r["request_id"])
    assert exported == given


def test_the_topic_page_shows_the_request(kiddie_requests, organizer):
    page = organizer.get("/collection/topics/leaf/").content.decode()
    request = ReportRequest.objects.get(topic_id="leaf")
    assert "Report request" in page
    assert "My 5-year-old keeps noticing that leaves turn red" in page
    assert request.background[:60] in page


def test_a_topic_without_a_request_shows_no_request_panel(organizer):
    make_topic("2024-1")
    assert "Report request" not in organizer.get("/collection/topics/2024-1/").content.decode()


# --- reports ------------------------------------------------------------------------------------------------


def test_kiddie_reports_import_whole(kiddie_requests):
    for path in KIDDIE_RUNS:
        reports_import(path=path)
    # Hand count from the files: run1, run3 and run4 have 5 sentences per topic, run2 has 4; 5 topics each.
    assert Answer.objects.count() == 20
    assert Sentence.objects.count() == 5 * (5 + 4 + 5 + 5)
    references, sentences = stored("run1", "earthworms")
    # run1/earthworms cites Earthworm twice (sentences 0 and 3): one reference, cited twice.
    assert references == ["Earthworm", "Soil_saturation", "Cutaneous_respiration", "Vermicompost"]
    assert [cited for _, cited in sentences] == [
        [("Earthworm", 0)],
        [("Soil_saturation", 1)],
        [("Cutaneous_respiration", 2)],
        [("Earthworm", 0)],
        [("Vermicompost", 3)],
    ]
    first = json.loads(KIDDIE_RUNS[0].read_text().splitlines()[0])
    answer = Answer.objects.get(run__run_id="run1", topic_id="leaf")
    assert answer.text == " ".join(sentence["text"] for sentence in first["responses"])
    assert ReportLayout.objects.get(answer=answer).team_id == "teamA"
    # Documents: run1 came first, so the collection has its texts; run2's own texts stay with run2's reports.
    assert Segment.objects.get(docid="Chlorophyll").text == first["documents"]["Chlorophyll"]["text"]
    run2_leaf = json.loads(KIDDIE_RUNS[1].read_text().splitlines()[0])
    own = ReportDocument.objects.get(answer__run__run_id="run2", answer__topic_id="leaf", segment_id="Chlorophyll")
    assert own.text == run2_leaf["documents"]["Chlorophyll"]["text"] != first["documents"]["Chlorophyll"]["text"]


def test_kiddie_reports_export_as_their_files(kiddie_requests):
    for path in KIDDIE_RUNS:
        reports_import(path=path)
    exported = [json.loads(line) for line in reports_lines()]
    given = [json.loads(line) for path in KIDDIE_RUNS for line in path.read_text().splitlines()]
    key = lambda record: (record["metadata"]["run_id"], record["metadata"]["topic_id"])  # noqa: E731
    assert sorted(exported, key=key) == sorted(given, key=key)


def test_the_three_citation_shapes(write_file):
    make_topic("leaf")
    path = write_file(
        "r.jsonl",
        jsonl(
            report(run_id="ids"),
            report(
                run_id="confidences",
                responses=[
                    # Equal confidences keep the file's order; higher first.
                    {"text": "Leaves are green from chlorophyll.", "citations": {"d1": 0.2, "d2": 0.9, "d4": 0.2}},
                    {"text": "No citation here.", "citations": {}},
                    {"text": "Red comes from anthocyanin.", "citations": {"d3": 1}},
                ],
            ),
            report(
                run_id="indices",
                references=["d9", "d3", "d1", "d2"],
                responses=[
                    {"text": "Leaves are green from chlorophyll.", "citations": [2, 3]},
                    {"text": "No citation here.", "citations": []},
                    {"text": "Red comes from anthocyanin.", "citations": [1]},
                ],
            ),
        ),
    )
    reports_import(path=path)
    assert stored("ids", "leaf") == (
        ["d1", "d2", "d3"],
        [
            ("Leaves are green from chlorophyll.", [("d1", 0), ("d2", 1)]),
            ("No citation here.", []),
            ("Red comes from anthocyanin.", [("d3", 2)]),
        ],
    )
    # Without references, the references are the documents in the order first cited: by priority.
    assert stored("confidences", "leaf")[1][0][1] == [("d2", 0), ("d1", 1), ("d4", 2)]
    assert stored("indices", "leaf") == (
        ["d9", "d3", "d1", "d2"],
        [
            ("Leaves are green from chlorophyll.", [("d1", 2), ("d2", 3)]),
            ("No citation here.", []),
            ("Red comes from anthocyanin.", [("d3", 1)]),
        ],
    )
    exported = {json.loads(line)["metadata"]["run_id"]: json.loads(line) for line in reports_lines(documents=False)}
    given = {json.loads(line)["metadata"]["run_id"]: json.loads(line) for line in path.read_text().splitlines()}
    given["confidences"]["responses"][2]["citations"] = {"d3": 1.0}
    assert exported == given


@pytest.mark.parametrize(
    ("record", "field", "words"),
    [
        (report(metadata={"run_id": "r1", "topic_id": "leaf"}), "metadata.team_id", "missing"),
        (report(metadata={"team_id": "t", "topic_id": "leaf"}), "metadata.run_id", "missing"),
        (report(metadata={"team_id": "t", "run_id": "r1"}), "metadata.topic_id", "missing"),
        (report(topic_id="nowhere"), "metadata.topic_id", "unknown topic nowhere"),
        (report(run_id="r 1"), "metadata.run_id", "a space"),
        (
            report(metadata={"team_id": "t", "run_id": "r1", "topic_id": "leaf", "narrative_id": "cloud"}),
            "metadata.narrative_id",
            "differs",
        ),
        (report(responses=None), "responses", "missing"),
        (
            report(responses=[{"text": "a", "citations": ["d1"]}, {"text": "b", "citations": {"d2": 1.0}}]),
            "responses[1].citations",
            "one shape",
        ),
        (
            report(responses=[{"text": "a", "citations": [0, 3]}], references=["d1"]),
            "responses[0].citations[1]",
            "out of range",
        ),
        (report(responses=[{"text": "a", "citations": [0]}]), "references", "missing"),
        (
            report(responses=[{"text": "a", "citations": ["d1"]}], references=["d2"]),
            "responses[0].citations",
            "not listed",
        ),
        (report(responses=[{"text": "a", "citations": {"d1": "high"}}]), "responses[0].citations.d1", "finite number"),
        (report(responses=[{"text": "a", "citations": ["d1", "d1"]}]), "responses[0].citations", "twice"),
        (report(responses=[{"text": "  ", "citations": []}]), "responses[0].text", "empty"),
        (report(responses=[{"citations": []}]), "responses[0].text", "missing"),
        (report(responses=[{"text": "a", "citations": [True]}]), "responses[0].citations", "expected"),
        (report(responses=[{"text": "a", "citations": ["d/1"]}]), "responses[0].citations[0]", "'/'"),
        (report(references=["d1", "d1"]), "references[1]", "twice"),
        (report(documents={"d1": {"id": "d2", "text": "x"}}), "documents.d1.id", "differs"),
        (report(documents=["d1"]), "documents", "expected a map"),
        (report(documents={"d1": {"id": "d1", "text": 5}}), "documents.d1.text", "expected str"),
        (report(run_id="r1"), "metadata.topic_id", "a second answer"),
    ],
)
def test_bad_reports_are_named_by_line_and_field_and_nothing_is_written(write_file, record, field, words):
    make_topic("leaf")
    path = write_file("r.jsonl", jsonl(report(run_id="r1"), record))
    before = snapshot()
    with pytest.raises(ImportFailure) as failure:
        reports_import(path=path)
    assert (failure.value.line, failure.value.field) == (2, field), str(failure.value)
    assert words in failure.value.message
    assert snapshot() == before


def test_a_changed_report_is_refused_without_replace_and_replaced_with_it(write_file):
    make_topic("leaf")
    reports_import(path=write_file("a.jsonl", jsonl(report())))
    changed = report()
    changed["responses"][2]["text"] = "Red comes from trapped sugars."
    path = write_file("b.jsonl", jsonl(changed))
    with pytest.raises(ImportFailure) as failure:
        reports_import(path=path)
    assert (failure.value.line, failure.value.field) == (1, "responses[2].text")
    result = reports_import(path=path, replace=True)
    assert result.replaced == 1
    assert stored("r1", "leaf")[1][2] == ("Red comes from trapped sugars.", [("d3", 2)])


def test_the_same_file_again_changes_nothing(write_file):
    make_topic("leaf")
    path = write_file("a.jsonl", jsonl(report()))
    reports_import(path=path)
    before = snapshot()
    result = reports_import(path=path)
    assert (result.unchanged, result.created, result.replaced) == (1, 0, 0)
    assert snapshot() == before  # not even a record of the attempt


def test_another_team_or_confidence_is_another_report(write_file):
    make_topic("leaf")
    given = report(responses=[{"text": "Leaves are green.", "citations": {"d1": 0.9, "d2": 0.5}}])
    reports_import(path=write_file("a.jsonl", jsonl(given)))
    for changed, field in (
        (report(responses=[{"text": "Leaves are green.", "citations": {"d1": 0.9, "d2": 0.7}}]), "citations"),
        ({**given, "metadata": {"team_id": "other", "run_id": "r1", "topic_id": "leaf"}}, "metadata"),
        (
            {**given, "documents": {"d1": {"id": "d1", "text": "Chlorophyll is green.", "title": "", "url": ""}}},
            "documents",
        ),
    ):
        path = write_file("b.jsonl", jsonl(changed))
        with pytest.raises(ImportFailure) as failure:
            reports_import(path=path)
        assert (failure.value.line, failure.value.field) == (1, field)
        assert reports_import(path=path, replace=True).replaced == 1
        assert [json.loads(line) for line in reports_lines()] == [changed]
        reports_import(path=write_file("a.jsonl", jsonl(given)), replace=True)


def test_a_report_over_its_requests_limit_is_imported_with_a_warning(write_file):
    requests_import(path=write_file("q.jsonl", jsonl({"request_id": "leaf", "title": "leaves", "limit": 40})))
    result = reports_import(path=write_file("a.jsonl", jsonl(report())))
    # "Leaves are green from chlorophyll. No citation here. Red comes from anthocyanin." is 80 characters.
    assert any("80 characters, over the request's 40" in warning for warning in result.warnings)
    assert Answer.objects.count() == 1


def test_import_reports_checks_every_file_before_it_imports_any(write_file, kiddie_requests):
    good = write_file("good.jsonl", jsonl(report(run_id="good")))
    bad = write_file("bad.jsonl", jsonl(report(run_id="bad", responses=[{"text": "a", "citations": [0]}])))
    with pytest.raises(CommandError, match="(?s)bad.jsonl, line 1, field 'references'.*Nothing was imported"):
        call_command("import_reports", str(good), str(bad))
    assert not Answer.objects.exists()
    call_command("import_reports", *map(str, KIDDIE_RUNS))
    assert Answer.objects.count() == 20


def test_export_reports_command_writes_a_file(kiddie_requests, tmp_path: Path):
    call_command("import_reports", *map(str, KIDDIE_RUNS))
    out = tmp_path / "run3.jsonl"
    call_command("export_reports", "--run", "run3", "--output", str(out))
    assert [json.loads(line) for line in out.read_text().splitlines()] == sorted(
        (json.loads(line) for line in KIDDIE_RUNS[2].read_text().splitlines()), key=lambda r: r["metadata"]["topic_id"]
    )
    with pytest.raises(CommandError, match="no run named nope"):
        call_command("export_reports", "--run", "nope")


def test_length_counts_characters_after_nfkc_and_words_as_written():
    from reports.layout import report_length

    # The ligature "ﬁ" (one character) is "fi" (two) after NFKC; "①" is "1"; sentences join with one space.
    assert report_length(["ﬁne", "①"], "characters") == len("fine 1") == 6
    assert report_length(["ﬁne ①", "two  words"], "words") == 4


@pytest.mark.parametrize(
    ("limit", "unit", "kept"),
    [
        # "One two." is 8 characters; "One two. Three four five." 25; all three 36 (hand count).
        (36, "characters", 3),
        (35, "characters", 2),
        (25, "characters", 2),
        (24, "characters", 1),
        (8, "characters", 1),
        (7, "characters", 0),
        (7, "words", 3),
        (6, "words", 2),
        (1, "words", 0),
    ],
)
def test_a_report_is_cut_at_a_sentence_boundary(limit, unit, kept):
    from reports.layout import report_cut

    assert report_cut(["One two.", "Three four five.", "Six seven."], limit, unit) == kept


def test_the_upload_page_offers_both_files(organizer):
    page = organizer.get("/collection/upload/").content.decode()
    assert "Report requests (AutoJudge JSONL)" in page
    assert "Reports (AutoJudge JSONL, one report a line)" in page
