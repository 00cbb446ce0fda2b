import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from assessor.collection.importing.runs import run_import
from assessor.models import Answer, Citation, ImportBatch, Run, Segment, Sentence
from assignment.importing import assignments_import
from support.importing import support_import
from support.models import SupportLabel
from tests.builders import FIXTURES, make_answer, make_run, make_segment, make_topic

pytestmark = pytest.mark.django_db

SLICE = FIXTURES / "judgments"
L31 = "baseline_rag24.test_l31_70b_instruct_top20"


def table_counts() -> dict[str, int]:
    models = (Run, Answer, Sentence, Citation, Segment, SupportLabel, ImportBatch)
    return {model.__name__: model.objects.count() for model in models}


def nist_line(topic_id: str, run_id: str, sentences: list[tuple[str, list[tuple[str, str]]]]) -> str:
    return json.dumps(
        {
            "topic_id": topic_id,
            "run_id": run_id,
            "sentences": [
                {
                    "sentenceID": index,
                    "text": text,
                    "citations": [
                        {"citationID": 0, "reference": docid, "support": support} for docid, support in citations
                    ],
                }
                for index, (text, citations) in enumerate(sentences)
            ],
        }
    )


DOC_A = "msmarco_v2.1_doc_00_1#0_0"
DOC_B = "msmarco_v2.1_doc_00_2#1_100"
DOC_C = "msmarco_v2.1_doc_00_3#2_200"

SENTENCES_1 = [("The sky is blue.", [(DOC_A, "2")]), ("It scatters light.", [(DOC_B, "1")]), ("No source here.", [])]
SENTENCES_2 = [("Cats purr.", [(DOC_C, "0")])]


def small_file(write_file, name: str = "support.jsonl", changes: dict | None = None) -> Path:
    answers = {("2024-1", "team.runA"): SENTENCES_1, ("2024-2", "team.runA"): SENTENCES_2}
    answers.update(changes or {})
    return write_file(name, "".join(nist_line(t, r, s) + "\n" for (t, r), s in answers.items()))


@pytest.fixture
def topics():
    return [make_topic("2024-1", "why is the sky blue"), make_topic("2024-2", "why do cats purr")]


def support_of(method: str) -> dict[tuple[str, int, int], int]:
    return {
        (label.citation.sentence.answer.topic_id, label.citation.sentence.index, label.citation.position): label.label
        for label in SupportLabel.objects.filter(method=method).select_related("citation__sentence__answer")
    }


def test_it_imports_answers_sentences_citations_and_labels(write_file, topics):
    make_segment(DOC_A, text="The sky looks blue because of scattering.")
    result = support_import(path=small_file(write_file), method="scratch")

    assert result.lines == 2
    answer = Answer.objects.get(topic_id="2024-1")
    assert answer.run.run_id == "team.runA"
    assert answer.text == "The sky is blue. It scatters light. No source here."
    assert answer.words == 10
    assert [(s.index, s.text) for s in answer.sentences.all()] == [
        (0, "The sky is blue."),
        (1, "It scatters light."),
        (2, "No source here."),
    ]
    assert [(c.sentence.index, c.position, c.segment_id) for c in Citation.objects.filter(sentence__answer=answer)] == [
        (0, 0, DOC_A),
        (1, 0, DOC_B),
    ]
    assert support_of("scratch") == {("2024-1", 0, 0): 2, ("2024-1", 1, 0): 1, ("2024-2", 0, 0): 0}
    batch = ImportBatch.objects.get()
    assert set(SupportLabel.objects.values_list("method_kind", "imported_from")) == {("scratch", batch.pk)}
    # Cited segments without a row get an empty placeholder; a stored text is kept.
    assert dict(Segment.objects.values_list("docid", "text")) == {
        DOC_A: "The sky looks blue because of scattering.",
        DOC_B: "",
        DOC_C: "",
    }


def test_the_variant_with_several_citations_and_unjudged_ones(write_file, topics):
    line = {
        "topic_id": "2024-1",
        "run_id": "runV",
        "sentences": [
            {
                "sentenceId": 0,
                "text": "The sky is blue.",
                "citations": [
                    {"citationId": 0, "reference": DOC_A, "support": "-1"},
                    {"citationId": 1, "reference": DOC_B, "support": "2"},
                    {"citationId": 2, "reference": DOC_C},
                ],
            },
            {"sentenceId": 1, "text": "Light scatters.", "citations": [{"citationId": 0, "reference": DOC_B, "support": 1}]},
        ],
    }
    write_file("variant.jsonl", json.dumps(line) + "\r\n")
    call_command("import_support", str(write_file("variant.jsonl", json.dumps(line) + "\r\n")), "--method", "auto",
                 "--name", "gpt4o-support")
    citations = Citation.objects.filter(sentence__answer__run__run_id="runV").order_by("sentence__index", "position")
    assert [(c.sentence.index, c.position, c.segment_id) for c in citations] == [
        (0, 0, DOC_A),
        (0, 1, DOC_B),
        (0, 2, DOC_C),
        (1, 0, DOC_B),
    ]
    # Every citation that carries a value has a label, "-1" (not judged) included; DOC_C carries none.
    assert support_of("gpt4o-support") == {("2024-1", 0, 0): -1, ("2024-1", 0, 1): 2, ("2024-1", 1, 0): 1}
    assert set(SupportLabel.objects.values_list("method_kind", flat=True)) == {"auto"}


def test_importing_the_same_file_twice_adds_nothing(write_file, topics):
    path = small_file(write_file)
    support_import(path=path, method="scratch")
    before = table_counts()
    result = support_import(path=path, method="scratch")
    assert table_counts() == before
    assert (result.created, result.unchanged, result.replaced) == (0, 3, 0)


def test_a_second_method_labels_the_same_citations(write_file, topics):
    support_import(path=small_file(write_file), method="scratch")
    changed = small_file(write_file, "auto.jsonl", {("2024-2", "team.runA"): [("Cats purr.", [(DOC_C, "2")])]})
    support_import(path=changed, method="auto")
    assert Answer.objects.count() == 2
    assert Citation.objects.count() == 3
    assert support_of("auto")[("2024-2", 0, 0)] == 2
    assert support_of("scratch")[("2024-2", 0, 0)] == 0


def test_an_answer_known_by_its_text_gets_the_sentences(write_file, topics):
    run = make_run("runA")
    answer = Answer.objects.create(
        run=run, topic=topics[0], text="The sky is blue.  It scatters light. No source here.", words=10
    )
    support_import(path=small_file(write_file), method="scratch")
    assert Answer.objects.filter(topic_id="2024-1").get() == answer
    answer.refresh_from_db()
    assert answer.text == "The sky is blue.  It scatters light. No source here."
    assert [s.text for s in answer.sentences.all()] == ["The sky is blue.", "It scatters light.", "No source here."]


def test_a_lost_sentence_text_is_taken_back_from_the_stored_answer(write_file, topics):
    Answer.objects.create(run=make_run("runA"), topic=topics[0], text="First one. Lost one here. Last one.", words=7)
    line = (
        '{"topic_id": "2024-1", "run_id": "runA", "sentences": ['  # noqa: UP031  (%s keeps the JSON's braces plain)
        '{"sentenceID": 0, "text": "First one.", "citations": []}, '
        '{"sentenceID": 1, "text": NaN, "citations": [{"citationID": 0, "reference": "%s", "support": "1"}]}, '
        '{"sentenceID": 2, "text": "Last one.", "citations": []}]}\n' % DOC_A
    )
    result = support_import(path=write_file("nan.jsonl", line), method="postedit")
    assert list(Sentence.objects.values_list("text", flat=True)) == ["First one.", "Lost one here.", "Last one."]
    assert result.warnings == []


def test_a_lost_sentence_text_of_a_new_answer_is_empty_with_a_warning(write_file, topics):
    line = '{"topic_id": "2024-1", "run_id": "runA", "sentences": [' \
           '{"sentenceID": 0, "text": "First one.", "citations": []}, {"sentenceID": 1, "text": NaN, "citations": []}]}\n'
    result = support_import(path=write_file("nan.jsonl", line), method="postedit")
    assert list(Sentence.objects.values_list("text", flat=True)) == ["First one.", ""]
    assert Answer.objects.get().text == "First one. "
    assert any("line 1: sentences[1].text is missing" in warning for warning in result.warnings)


def test_an_answer_text_that_does_not_split_is_a_warning_and_the_sentences_are_attached(write_file, topics):
    answer = Answer.objects.create(run=make_run("runA"), topic=topics[0], text="A different answer.", words=3)
    result = support_import(path=small_file(write_file), method="scratch")
    answer.refresh_from_db()
    assert answer.text == "A different answer."
    assert answer.sentences.count() == 3
    assert len(result.warnings) == 1 and "line 1: the sentences differ" in result.warnings[0]


def test_sentences_and_citations_from_a_run_file_are_matched(write_file, topics):
    seg_a, seg_b, seg_x = make_segment(DOC_A), make_segment(DOC_B), make_segment("msmarco_v2.1_doc_09_9#0_0")
    answer = make_answer(
        make_run("runA"),
        topics[0],
        [(" The sky is blue.", [seg_a, seg_x]), ("It scatters light.", [seg_b]), ("No source here.", [])],
    )
    before = table_counts()
    support_import(path=small_file(write_file), method="scratch")
    # Only topic 2024-2's new answer was made; topic 2024-1's sentences and citations are the stored ones.
    assert Sentence.objects.filter(answer=answer).count() == 3
    assert Citation.objects.filter(sentence__answer=answer).count() == 3
    assert Answer.objects.count() == before["Answer"] + 1
    assert support_of("scratch")[("2024-1", 0, 0)] == 2
    assert support_of("scratch")[("2024-1", 1, 0)] == 1


def test_a_judged_citation_at_another_position_is_matched_with_a_warning(write_file, topics):
    seg_a, seg_x = make_segment(DOC_A), make_segment("msmarco_v2.1_doc_09_9#0_0")
    make_answer(make_run("runA"), topics[0], [("The sky is blue.", [seg_x, seg_a])])
    path = write_file("s.jsonl", nist_line("2024-1", "runA", [("The sky is blue.", [(DOC_A, "2")])]) + "\n")
    result = support_import(path=path, method="scratch")
    assert support_of("scratch") == {("2024-1", 0, 1): 2}
    assert Citation.objects.count() == 2
    assert "is citation 1 of the stored sentence, not 0" in result.warnings[0]


# --- Bad input: a clear error, and nothing changes ---------------------------------


def assert_fails_and_changes_nothing(path: Path, match: str, *args: str) -> None:
    before = table_counts()
    with pytest.raises(CommandError, match=match):
        call_command("import_support", str(path), "--method", "scratch", *args)
    assert table_counts() == before


def test_a_truncated_json_line_changes_nothing(write_file, topics):
    good = small_file(write_file).read_text().splitlines()
    assert_fails_and_changes_nothing(write_file("cut.jsonl", good[0] + "\n" + good[1][:40]), r"cut.jsonl, line 2: not valid JSON")


def test_an_unknown_topic_is_an_error(write_file, topics):
    path = small_file(write_file, "s.jsonl", {("2024-404", "runA"): SENTENCES_2})
    assert_fails_and_changes_nothing(path, r"s.jsonl, line 3, field 'topic_id': unknown topic 2024-404")


def test_a_support_value_outside_the_vocabulary_names_its_field(write_file, topics):
    path = small_file(write_file, "s.jsonl", {("2024-2", "team.runA"): [("Cats purr.", [(DOC_C, "3")])]})
    assert_fails_and_changes_nothing(path, r"line 2, field 'sentences\[0\].citations\[0\].support': '3' is not a support value")


def test_a_second_answer_of_a_run_for_a_topic_is_an_error(write_file, topics):
    path = small_file(write_file, "s.jsonl", {("2024-1", "runA"): SENTENCES_1})
    assert_fails_and_changes_nothing(path, r"line 3, field 'run_id': a second answer of run runA for topic 2024-1")


def test_an_ambiguous_run_id_is_an_error(write_file, topics):
    make_run("x.runA")
    make_run("y.runA")
    path = write_file("s.jsonl", nist_line("2024-1", "runA", SENTENCES_1) + "\n")
    assert_fails_and_changes_nothing(path, r"line 1, field 'run_id'.*matches several stored runs")


def test_a_contradicting_label_is_an_error_unless_replace(write_file, topics):
    support_import(path=small_file(write_file), method="scratch")
    changed = small_file(write_file, "changed.jsonl", {("2024-1", "team.runA"): [SENTENCES_1[0], ("It scatters light.", [(DOC_B, "2")]), SENTENCES_1[2]]})
    assert_fails_and_changes_nothing(changed, r"line 1, field 'sentences\[1\].citations\[0\].support'")
    result = support_import(path=changed, method="scratch", replace=True)
    assert (result.unchanged, result.replaced) == (2, 1)
    assert support_of("scratch")[("2024-1", 1, 0)] == 2


def test_contradicting_sentences_are_an_error_unless_replace(write_file, topics):
    support_import(path=small_file(write_file), method="scratch")
    other = [("The sea is blue.", [(DOC_A, "0")])]
    path = small_file(write_file, "other.jsonl", {("2024-1", "team.runA"): other})
    assert_fails_and_changes_nothing(path, r"line 1, field 'sentences'")
    support_import(path=path, method="scratch", replace=True)
    answer = Answer.objects.get(topic_id="2024-1")
    assert answer.text == "The sea is blue."
    assert [s.text for s in answer.sentences.all()] == ["The sea is blue."]
    assert support_of("scratch") == {("2024-1", 0, 0): 0, ("2024-2", 0, 0): 0}


# --- Real data -------------------------------------------------------------------


def read_records(path: Path) -> list[dict]:
    # NIST's export holds bare NaN for lost sentence texts; Python's json reads it as float('nan').
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def support_counts(path: Path) -> dict[str, int]:
    records = read_records(path)
    citations = [c for r in records for s in r["sentences"] for c in s["citations"]]
    return {
        "answers": len(records),
        "sentences": sum(len(r["sentences"]) for r in records),
        "citations": len(citations),
        "labels": sum("support" in c for c in citations),
        "full": sum(c.get("support") == "2" for c in citations),
    }


def test_the_real_slice_of_support_judgments_imports_as_the_file_says():
    call_command("import_topics", str(SLICE / "topics.slice.tsv"))
    path = SLICE / "citation_judgments_without_prediction.slice.jsonl"
    call_command("import_support", str(path), "--method", "scratch")
    expected = support_counts(path)
    assert Answer.objects.count() == expected["answers"]
    assert Sentence.objects.count() == expected["sentences"]
    assert Citation.objects.count() == expected["citations"]
    assert SupportLabel.objects.count() == expected["labels"]
    assert SupportLabel.objects.filter(label=2).count() == expected["full"]


def test_the_nugget_file_and_the_support_file_share_the_l31_answers():
    """The run baseline_rag24.test_l31_70b_instruct_top20 is in both: one answer each topic, with both kinds of labels."""
    call_command("import_topics", str(SLICE / "topics.slice.tsv"))
    assignments_import(path=SLICE / "nugget_assignment.slice.jl", nuggets="auto_edit", assigner="manual")
    answers_before = Answer.objects.count()
    for name, method in [
        ("citation_judgments_with_prediction.slice.jsonl", "postedit"),
        ("citation_judgments_without_prediction.slice.jsonl", "scratch"),
    ]:
        support_import(path=SLICE / name, method=method)
    run = Run.objects.get(run_id=L31)
    assert not Run.objects.filter(run_id=f"coordinators.{L31}").exists()
    # Every support line's (topic, run) is in the nugget slice, so no answer was added.
    nugget_keys = {(r["qid"], r["run_id"]) for r in read_records(SLICE / "nugget_assignment.slice.jl")}
    support_keys = {
        (r["topic_id"], r["run_id"].split(".", 1)[1])
        for name in ("citation_judgments_with_prediction.slice.jsonl", "citation_judgments_without_prediction.slice.jsonl")
        for r in read_records(SLICE / name)
    }
    assert support_keys <= nugget_keys
    assert Answer.objects.count() == answers_before
    for answer in Answer.objects.filter(run=run):
        assert answer.assignment_labels.exists()
        assert SupportLabel.objects.filter(citation__sentence__answer=answer).exists()
        joined = " ".join(answer.sentences.values_list("text", flat=True))
        assert joined.split() == answer.text.split()


def test_lost_sentence_texts_of_the_real_slice_come_back_from_the_nugget_file():
    call_command("import_topics", str(SLICE / "topics.slice.tsv"))
    assignments_import(path=SLICE / "nugget_assignment.slice.jl", nuggets="auto_edit", assigner="manual")
    result = support_import(path=SLICE / "citation_judgments_with_prediction.slice.jsonl", method="postedit")
    assert result.warnings == []
    answer = Answer.objects.get(topic_id="2024-79154", run__run_id="Enhanced_Iterative_Fact_Refinement_and_Prioritization")
    sentence = answer.sentences.get(index=8)  # NaN in the support file
    assert sentence.text.startswith("Solar eclipses, which have always been capable of producing profound")
    assert " ".join(answer.sentences.values_list("text", flat=True)).split() == answer.text.split()


def test_a_run_file_then_a_support_file_share_sentences_and_citations():
    call_command("import_topics", str(SLICE / "topics.slice.tsv"))
    run_import(path=SLICE / f"{L31}.slice.jsonl")
    before = table_counts()
    support_import(path=SLICE / "citation_judgments_with_prediction.slice.jsonl", method="postedit")
    answer = Answer.objects.get(run__run_id=L31, topic_id="2024-79154")
    record = next(r for r in read_records(SLICE / "citation_judgments_with_prediction.slice.jsonl") if r["run_id"].endswith(L31))
    assert answer.sentences.count() == len(record["sentences"])
    judged = {
        (s["sentenceID"], s["citations"][0]["reference"]): int(s["citations"][0]["support"])
        for s in record["sentences"]
        if s["citations"]
    }
    stored = {
        (label.citation.sentence.index, label.citation.segment_id): label.label
        for label in SupportLabel.objects.filter(citation__sentence__answer=answer).select_related("citation__sentence")
    }
    assert stored == judged
    assert all(label.citation.position == 0 for label in SupportLabel.objects.filter(citation__sentence__answer=answer))
    # The l31 answer's sentences were the run file's: only the other runs' answers were added.
    assert Sentence.objects.filter(answer=answer).count() == len(record["sentences"])
    assert Answer.objects.count() == before["Answer"] + 2


@pytest.mark.shared_data
def test_the_full_nist_support_files_import_as_they_say(shared_data):
    call_command("import_topics", str(shared_data / "topics.rag24.test.txt"))
    nuggets = read_records(shared_data / "nugget_assignment.20241108.jl")
    call_command("import_assignments", str(shared_data / "nugget_assignment.20241108.jl"), "--nuggets", "auto_edit",
                 "--assigner", "manual")
    nugget_keys = {(r["qid"], r["run_id"]) for r in nuggets}
    expected_answers = len(nugget_keys)
    labels = 0
    for name, method in [
        ("final.citation_judgments_with_prediction.20241025.jsonl", "postedit"),
        ("final.citation_judgments_without_prediction.20241025.jsonl", "scratch"),
    ]:
        path = shared_data / name
        call_command("import_support", str(path), "--method", method)
        records = read_records(path)
        # The team prefix goes: `citi.BEST_cot_gpt3.5` is the nugget file's `BEST_cot_gpt3.5`.
        expected_answers += sum((r["topic_id"], r["run_id"].split(".", 1)[1]) not in nugget_keys for r in records)
        labels += support_counts(path)["labels"]
        assert SupportLabel.objects.filter(method=method).count() == support_counts(path)["labels"]
    assert Answer.objects.count() == expected_answers
    assert SupportLabel.objects.count() == labels
    before = table_counts()
    call_command("import_support", str(shared_data / "final.citation_judgments_with_prediction.20241025.jsonl"),
                 "--method", "postedit")
    assert table_counts() == before


def test_a_support_file_then_the_nugget_file_share_the_answers():
    call_command("import_topics", str(SLICE / "topics.slice.tsv"))
    for name, method in [
        ("citation_judgments_with_prediction.slice.jsonl", "postedit"),
        ("citation_judgments_without_prediction.slice.jsonl", "scratch"),
    ]:
        support_import(path=SLICE / name, method=method)
    answers_before = set(Answer.objects.values_list("id", flat=True))
    result = assignments_import(path=SLICE / "nugget_assignment.slice.jl", nuggets="auto_edit", assigner="manual")
    # The nugget slice has 8 answers, 7 of them judged for support; BEST_cot_gpt3.5 on 2024-79154 is new.
    assert Answer.objects.count() == len(answers_before) + 1
    assert set(Answer.objects.get(run__run_id=f"coordinators.{L31}", topic_id="2024-79154").assignment_labels.values_list(
        "assigner", flat=True)) == {"manual"}
    # The one text that differs is the answer whose lost sentence the support file could not know.
    assert len(result.warnings) == 1
    assert "Enhanced_Iterative_Fact_Refinement_and_Prioritization for topic 2024-79154" in result.warnings[0]


def test_a_second_name_of_one_kind_gets_labels_of_its_own():
    call_command("import_topics", str(SLICE / "topics.slice.tsv"))
    path = SLICE / "citation_judgments_without_prediction.slice.jsonl"
    call_command("import_support", str(path), "--method", "scratch")
    first = SupportLabel.objects.filter(method="scratch").count()
    call_command("import_support", str(path), "--method", "scratch", "--name", "scratch-again")
    assert first > 0
    assert SupportLabel.objects.filter(method="scratch-again").count() == first
