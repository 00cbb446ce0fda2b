import json
import unicodedata
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from assessor.collection.importing.runs import run_import
from assessor.importing.base import ImportFailure
from assessor.models import Answer, AnswerReference, Citation, ImportBatch, Qrel, Run, Segment, Sentence
from support.models import SupportLabel
from tests.builders import FIXTURES, make_batch, make_run, make_segment, make_topic, source_of

pytestmark = pytest.mark.django_db

COLLECTION = FIXTURES / "collection"
RUN = "team.my_run"


def answer_record(topic_id: str = "2024-1", topic: str = "what is a nugget", **overrides) -> dict:
    record = {
        "run_id": RUN,
        "topic_id": topic_id,
        "topic": topic,
        "references": ["has_text#0", "new#1", "new#2"],
        "response_length": 9,
        "answer": [
            {"text": "A nugget is a fact.", "citations": [1, 0]},
            {"text": "No citation here.", "citations": []},
            {"text": "It is atomic.", "citations": [2]},
        ],
    }
    record.update(overrides)
    return record


def jsonl(*records: dict, newline: str = "\n") -> str:
    return "".join(json.dumps(record) + newline for record in records)


def snapshot() -> tuple:
    """Everything a run import may touch."""
    return (
        set(Run.objects.values_list("run_id", flat=True)),
        set(Answer.objects.values_list("run__run_id", "topic_id", "text", "words")),
        set(AnswerReference.objects.values_list("answer_id", "rank", "segment_id")),
        set(Sentence.objects.values_list("answer_id", "index", "text")),
        set(Citation.objects.values_list("sentence_id", "position", "segment_id", "reference_rank")),
        set(Segment.objects.values_list("docid", "text")),
        ImportBatch.objects.count(),
    )


def answer_structure(answer: Answer) -> tuple:
    return (
        [reference.segment_id for reference in answer.references.all()],
        [
            (sentence.text, [(c.position, c.segment_id, c.reference_rank) for c in sentence.citations.all()])
            for sentence in answer.sentences.all()
        ],
    )


@pytest.fixture
def topics():
    make_segment("has_text#0", text="A nugget is an atomic fact.")
    return [make_topic("2024-1", "what is a nugget"), make_topic("2024-2", "why runs")]


def test_it_imports_answers_with_their_references_sentences_and_citations(write_file, topics):
    path = write_file(
        "run.jsonl", jsonl(answer_record(), answer_record("2024-2", "why runs", references=[], answer=[]))
    )
    result = run_import(path=path)
    assert (result.lines, result.created) == (2, 2)
    run = Run.objects.get()
    assert run.run_id == RUN
    answer = Answer.objects.get(topic_id="2024-1")
    assert answer.text == "A nugget is a fact. No citation here. It is atomic."
    assert answer.words == 11
    assert answer_structure(answer) == (
        ["has_text#0", "new#1", "new#2"],
        [
            ("A nugget is a fact.", [(0, "new#1", 1), (1, "has_text#0", 0)]),
            ("No citation here.", []),
            ("It is atomic.", [(0, "new#2", 2)]),
        ],
    )
    # Cited ids without text become placeholders; stored text is left alone.
    assert dict(Segment.objects.values_list("docid", "text")) == {
        "has_text#0": "A nugget is an atomic fact.",
        "new#1": "",
        "new#2": "",
    }
    empty = Answer.objects.get(topic_id="2024-2")
    assert (empty.text, empty.words) == ("", 0)
    assert result.warnings == [f"{path}, line 2: the answer of run {RUN} for topic 2024-2 is empty"]


def test_it_tolerates_crlf_and_a_byte_order_mark(write_file, topics):
    path = write_file("run.jsonl", "\ufeff" + jsonl(answer_record(), newline="\r\n"))
    run_import(path=path)
    assert Answer.objects.get().text == "A nugget is a fact. No citation here. It is atomic."


def test_importing_the_same_file_twice_adds_nothing(write_file, topics):
    path = write_file("run.jsonl", jsonl(answer_record(), answer_record("2024-2", "why runs")))
    run_import(path=path)
    before = snapshot()
    again = run_import(path=path)
    assert (again.created, again.unchanged, again.replaced) == (0, 2, 0)
    assert snapshot() == before


def test_a_run_id_with_a_team_prefix_names_the_stored_run(write_file, topics):
    make_run("my_run")
    run_import(path=write_file("run.jsonl", jsonl(answer_record())))
    assert list(Run.objects.values_list("run_id", flat=True)) == ["my_run"]
    assert Answer.objects.get().run.run_id == "my_run"


def test_an_answer_known_by_its_text_only_gets_its_sentences(write_file, topics):
    # As a nugget file leaves it: the answer_text, with other spacing, and no structure.
    run = make_run("my_run")
    answer = Answer.objects.create(
        run=run, topic=topics[0], text="A nugget is a fact.  No citation here.\nIt is atomic.", words=11
    )
    result = run_import(path=write_file("run.jsonl", jsonl(answer_record())))
    assert (result.created, result.replaced) == (1, 0)
    answer.refresh_from_db()
    assert answer.text == "A nugget is a fact. No citation here. It is atomic."
    assert answer_structure(answer)[1][0] == ("A nugget is a fact.", [(0, "new#1", 1), (1, "has_text#0", 0)])
    assert Answer.objects.count() == 1


def test_an_answer_known_by_another_text_is_a_contradiction(write_file, topics):
    Answer.objects.create(run=make_run("my_run"), topic=topics[0], text="Something else entirely.", words=3)
    path = write_file("run.jsonl", jsonl(answer_record()))
    before = snapshot()
    with pytest.raises(
        ImportFailure,
        match=r"line 1, field 'answer': the stored answer of run my_run for topic 2024-1 has another text",
    ):
        run_import(path=path)
    assert snapshot() == before
    run_import(path=path, replace=True)
    assert Answer.objects.get().text == "A nugget is a fact. No citation here. It is atomic."


def answer_from_a_support_file(topic, first_cited: str) -> Answer:
    """As a support file leaves an answer: sentences (trimmed), their judged first citation, a label, no references."""
    answer = Answer.objects.create(
        run=make_run("my_run"), topic=topic, text="A nugget is a fact. No citation here. It is atomic.", words=11
    )
    texts = ["A nugget is a fact.", "No citation here.", "It is atomic. "]
    sentences = [Sentence.objects.create(answer=answer, index=index, text=text) for index, text in enumerate(texts)]
    segment, _ = Segment.objects.get_or_create(docid=first_cited)
    citation = Citation.objects.create(sentence=sentences[0], position=0, segment=segment)
    SupportLabel.objects.create(
        citation=citation,
        method="scratch",
        source=source_of("support", "scratch"),
        method_kind="scratch",
        label=1,
        imported_from=make_batch(),
    )
    return answer


def test_sentences_from_a_support_file_get_the_runs_references_and_later_citations(write_file, topics):
    answer = answer_from_a_support_file(topics[0], first_cited="new#1")
    path = write_file("run.jsonl", jsonl(answer_record()))
    result = run_import(path=path)
    assert (result.created, result.replaced) == (1, 0)
    assert answer_structure(answer) == (
        ["has_text#0", "new#1", "new#2"],
        [
            ("A nugget is a fact.", [(0, "new#1", 1), (1, "has_text#0", 0)]),
            ("No citation here.", []),
            ("It is atomic.", [(0, "new#2", 2)]),
        ],
    )
    # The judged citation is the same row: its label stays.
    assert SupportLabel.objects.get().citation.reference_rank == 1
    assert run_import(path=path).unchanged == 1


def test_a_judged_citation_the_run_puts_second_moves_there_with_its_label(write_file, topics):
    # NIST's support files sometimes judged a citation that is not the run's first (2024-38986 of l31).
    answer = answer_from_a_support_file(topics[0], first_cited="has_text#0")
    path = write_file("run.jsonl", jsonl(answer_record()))
    result = run_import(path=path)
    assert answer_structure(answer)[1][0] == ("A nugget is a fact.", [(0, "new#1", 1), (1, "has_text#0", 0)])
    label = SupportLabel.objects.get()
    assert (label.citation.position, label.citation.segment_id) == (1, "has_text#0")
    assert result.warnings == [
        f"{path}, line 1: answer[0]: the stored first citation (has_text#0) is citation 1 of the run; "
        "its labels move with it, and the metrics judge the first"
    ]
    assert run_import(path=path).unchanged == 1


def test_sentences_from_a_support_file_citing_another_segment_first_are_a_contradiction(write_file, topics):
    answer_from_a_support_file(topics[0], first_cited="new#2")
    before = snapshot()
    with pytest.raises(
        ImportFailure, match=r"line 1, field 'answer\[0\].citations': .*has another answer\[0\].citations"
    ):
        run_import(path=write_file("run.jsonl", jsonl(answer_record())))
    assert snapshot() == before


def test_a_changed_answer_is_an_error_unless_replace_and_replacing_drops_support_labels(write_file, topics):
    call_command("import_run", str(write_file("a.jsonl", jsonl(answer_record()))))
    first_citation = Citation.objects.get(sentence__index=0, position=0)
    SupportLabel.objects.create(
        citation=first_citation,
        method="scratch",
        source=source_of("support", "scratch"),
        method_kind="scratch",
        label=2,
        imported_from=make_batch(),
    )
    changed = answer_record()
    changed["answer"][1]["citations"] = [2]
    path = write_file("b.jsonl", jsonl(changed))
    before = snapshot()
    with pytest.raises(CommandError, match=r"b.jsonl, line 1, field 'answer\[1\].citations': .* use --replace"):
        call_command("import_run", str(path))
    assert snapshot() == before

    result = run_import(path=path, replace=True)
    assert (result.created, result.replaced) == (0, 1)
    answer = Answer.objects.get()
    assert answer_structure(answer)[1][1] == ("No citation here.", [(0, "new#2", 2)])
    assert SupportLabel.objects.count() == 0
    assert result.warnings == ["replacing 1 answers deleted 1 labels of their citations"]
    assert Sentence.objects.count() == 3
    assert AnswerReference.objects.count() == 3


def bad_records() -> dict[str, tuple[str, str]]:
    """Name -> (second line of the file, expected message)."""
    out_of_range = answer_record("2024-2", "why runs")
    out_of_range["answer"][2]["citations"] = [0, 3]
    too_many = answer_record("2024-2", "why runs", references=[f"d#{i}" for i in range(21)])
    return {
        "truncated JSON": (json.dumps(answer_record("2024-2", "why runs"))[:-20], r"line 2: not valid JSON"),
        "unknown topic": (json.dumps(answer_record("2024-9")), r"line 2, field 'topic_id': unknown topic 2024-9"),
        "topic text": (
            json.dumps(answer_record("2024-2", "why  runs")),
            r"line 2, field 'topic': the topic text 'why  runs' differs from topic 2024-2's query 'why runs'",
        ),
        "citation out of range": (
            json.dumps(out_of_range),
            r"line 2, field 'answer\[2\].citations\[1\]': citation 3 is out of range: the answer has 3 references",
        ),
        "citation not an index": (
            json.dumps(answer_record("2024-2", "why runs", answer=[{"text": "x", "citations": ["0"]}])),
            r"line 2, field 'answer\[0\].citations\[0\]': expected a reference index",
        ),
        "duplicate answer": (
            json.dumps(answer_record()),
            r"line 2, field 'topic_id': a second answer of run team.my_run for topic 2024-1 \(first on line 1\)",
        ),
        "more than 20 references": (
            json.dumps(too_many),
            r"line 2, field 'references': 21 references, the campaign's rules allow at most 20",
        ),
        "missing field": (
            json.dumps({k: v for k, v in answer_record("2024-2", "why runs").items() if k != "references"}),
            r"line 2, field 'references': missing",
        ),
        "sentence without text": (
            json.dumps(answer_record("2024-2", "why runs", answer=[{"citations": []}])),
            r"line 2, field 'answer\[0\].text': missing",
        ),
    }


@pytest.mark.parametrize("case", list(bad_records()))
def test_a_bad_line_names_its_place_and_changes_nothing(write_file, topics, case):
    line, message = bad_records()[case]
    path = write_file("bad.jsonl", json.dumps(answer_record()) + "\n" + line + "\n")
    before = snapshot()
    with pytest.raises(ImportFailure, match=message) as failure:
        run_import(path=path)
    assert failure.value.path == str(path)
    assert snapshot() == before


def test_a_duplicate_answer_in_a_later_chunk_is_caught(write_file, topics, monkeypatch):
    from assessor.collection.importing import runs

    monkeypatch.setattr(runs, "CHUNK_ANSWERS", 1)
    path = write_file("run.jsonl", jsonl(answer_record(), answer_record("2024-2", "why runs"), answer_record()))
    with pytest.raises(ImportFailure, match=r"line 3, field 'topic_id': a second answer"):
        run_import(path=path)
    assert Answer.objects.count() == 0


def test_the_command_reports_a_failure_and_that_nothing_was_imported(write_file, topics):
    path = write_file("bad.jsonl", json.dumps(answer_record("2024-9")) + "\n")
    with pytest.raises(
        CommandError, match=r"bad.jsonl, line 1, field 'topic_id': unknown topic 2024-9.*\nNothing was imported."
    ):
        call_command("import_run", str(path))


def test_answers_over_400_words_are_imported_with_a_warning(write_file, topics):
    # 400 words, then 400 words that NFKC turns into 401 ("¨" becomes a space and a combining mark).
    at_limit = " ".join(["word"] * 400)
    over = " ".join(["word"] * 399) + " a¨b"
    assert len(over.split()) == 400 and len(unicodedata.normalize("NFKC", over).split()) == 401
    path = write_file(
        "run.jsonl",
        jsonl(
            answer_record(references=[], answer=[{"text": at_limit, "citations": []}]),
            answer_record("2024-2", "why runs", references=[], answer=[{"text": over, "citations": []}]),
        ),
    )
    result = run_import(path=path)
    assert result.created == 2
    assert result.warnings == [
        f"{path}, line 2: the answer of run {RUN} for topic 2024-2 has 401 words, over the campaign's 400"
    ]
    assert Answer.objects.get(topic_id="2024-2").words == 400  # L counts plain whitespace words
    assert ImportBatch.objects.get().warnings == result.warnings


def fixture_counts(paths: list[Path]) -> dict[str, int]:
    """What importing these run files must store, read independently with json."""
    answers = references = sentences = citations = 0
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                answers += 1
                references += len(record["references"])
                sentences += len(record["answer"])
                citations += sum(len(sentence["citations"]) for sentence in record["answer"])
    return {"answers": answers, "references": references, "sentences": sentences, "citations": citations}


def stored_counts() -> dict[str, int]:
    return {
        "answers": Answer.objects.count(),
        "references": AnswerReference.objects.count(),
        "sentences": Sentence.objects.count(),
        "citations": Citation.objects.count(),
    }


def docids_of(segments: Path, qrels: Path, runs: list[Path]) -> tuple[set[str], set[str]]:
    """(ids with text, every id named anywhere)."""
    with segments.open(encoding="utf-8") as handle:
        with_text = {json.loads(line)["docid"] for line in handle}
    named = set(with_text)
    with qrels.open(encoding="utf-8") as handle:
        named.update(line.split()[2] for line in handle if line.strip())
    for path in runs:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                named.update(json.loads(line)["references"])
    return with_text, named


def test_runs_first_then_segments_fill_the_placeholders():
    call_command("import_topics", str(COLLECTION / "topics.tsv"))
    run_path = COLLECTION / "run_l31_70b.jsonl"
    call_command("import_run", str(run_path))
    assert set(Segment.objects.values_list("text", flat=True)) == {""}
    call_command("import_segments", str(COLLECTION / "segments.jsonl"))
    call_command("import_qrels", str(COLLECTION / "qrels.txt"), "--source", "nist")
    with_text, named = docids_of(COLLECTION / "segments.jsonl", COLLECTION / "qrels.txt", [run_path])
    assert set(Segment.objects.exclude(text="").values_list("docid", flat=True)) == with_text
    assert set(Segment.objects.values_list("docid", flat=True)) == named
    assert stored_counts() == fixture_counts([run_path])


def test_the_real_slice_imports_and_matches_the_file():
    call_command("import_topics", str(COLLECTION / "topics.tsv"))
    run_path = COLLECTION / "run_l31_70b.jsonl"
    run_import(path=run_path)
    assert stored_counts() == fixture_counts([run_path])
    with run_path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            answer = Answer.objects.get(topic_id=record["topic_id"])
            assert answer.run.run_id == record["run_id"]
            assert answer.words == record["response_length"]
            assert answer_structure(answer) == (
                record["references"],
                [
                    (
                        sentence["text"],
                        [
                            (position, record["references"][index], index)
                            for position, index in enumerate(sentence["citations"])
                        ],
                    )
                    for sentence in record["answer"]
                ],
            )


@pytest.mark.shared_data
def test_the_full_trec_data_imports(shared_data):
    segments = shared_data / "segments.top20.jsonl"
    qrels = shared_data / "2024-retrieval-qrels.txt"
    runs = sorted(shared_data.glob("baseline_rag24.test_*_top20.jsonl"))
    assert len(runs) == 3
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"))
    call_command("import_segments", str(segments))
    call_command("import_qrels", str(qrels), "--source", "nist")
    warnings = [warning for path in runs for warning in run_import(path=path).warnings]

    with_text, named = docids_of(segments, qrels, runs)
    assert set(Segment.objects.exclude(text="").values_list("docid", flat=True)) == with_text
    assert Segment.objects.count() == len(named)
    with qrels.open(encoding="utf-8") as handle:
        assert sum(1 for line in handle if line.strip()) == 20283 == Qrel.objects.count()
    assert stored_counts() == fixture_counts(runs)
    assert Run.objects.count() == 3
    over = 0
    for path in runs:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                text = " ".join(sentence["text"] for sentence in json.loads(line)["answer"])
                over += len(unicodedata.normalize("NFKC", text).split()) > 400
    assert len(warnings) == over

    again = [run_import(path=path) for path in runs]
    assert [(result.created, result.unchanged) for result in again] == [(0, 301)] * 3


@pytest.mark.shared_data
def test_the_l31_run_after_nists_support_judgments_keeps_every_label(shared_data):
    from support.importing import support_import

    run_path = shared_data / "baseline_rag24.test_l31_70b_instruct_top20.jsonl"
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"))
    support_import(path=shared_data / "final.citation_judgments_with_prediction.20241025.jsonl", method="postedit")
    labels = set(SupportLabel.objects.values_list("pk", "citation_id", "label"))
    result = run_import(path=run_path)

    assert set(SupportLabel.objects.values_list("pk", "citation_id", "label")) == labels
    # The support file names the run with its team prefix (coordinators.baseline_...).
    run = Run.objects.get(run_id__endswith="." + run_path.stem)
    with run_path.open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    for record in records:
        answer = Answer.objects.get(run=run, topic_id=record["topic_id"])
        assert answer_structure(answer) == (
            record["references"],
            [
                (
                    sentence["text"],
                    [
                        (position, record["references"][index], index)
                        for position, index in enumerate(sentence["citations"])
                    ],
                )
                for sentence in record["answer"]
            ],
        )
    # One sentence of 2024-38986 was judged on the run's second citation.
    assert len(result.warnings) == 1 and "line 223: answer[3]" in result.warnings[0]
    assert run_import(path=run_path).unchanged == len(records)
