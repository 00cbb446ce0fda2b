"""Question banks in the AutoJudge v3 layout: import_banks, export_banks, the download, and the reference's
own pydantic models reading what is exported."""

import hashlib
import importlib
import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.importing.base import ImportFailure
from assessor.models import ImportBatch
from assessor.work.roles import Role
from nuggets.bankfiles import banks_import
from nuggets.banks import Answer, Question, bank_questions
from nuggets.models import GoldAnswer, Nugget, NuggetSet
from tests.builders import make_topic, make_user

pytestmark = pytest.mark.django_db

SKY = "Why is the sky blue?"
SUN = "When is the sky red?"
# Hand-written, as a user of the AutoJudge tools would write it: one bank keyed by text, one as a list,
# references in both shapes, the rule in both cases, importance as a word and as ARGUE's weight.
LINE_1 = {
    "query_id": "t1",
    "title_query": "the colour of the sky",
    "format_version": "v3",
    "nugget_bank": {
        SKY: {
            "question": SKY,
            "question_id": hashlib.md5(SKY.encode()).hexdigest(),
            "answers": {
                "Rayleigh scattering": {"answer": "Rayleigh scattering", "references": ["d1", "d2"]},
                "Short wavelengths scatter more": {
                    "answer": "Short wavelengths scatter more",
                    "references": [{"doc_id": "d3", "text": "blue scatters"}],
                },
            },
            "aggregator_type": "OR",
            "importance": "vital",
        },
        SUN: {"question": SUN, "importance": 1},
    },
}
LINE_2 = {
    "query_id": "t2",
    "nugget_bank": [
        {
            "question": "Why do cats purr?",
            "answers": [{"answer": "Contentment", "references": ["c1"]}, {"answer": "Healing"}],
            "aggregator_type": "and",
            "importance": 2,
        }
    ],
}
EXPECTED = {
    "t1": [
        Question(
            text=SKY,
            importance="vital",
            rule="or",
            answers=(
                Answer("Rayleigh scattering", ("d1", "d2")),
                Answer("Short wavelengths scatter more", ("d3",)),
            ),
        ),
        Question(text=SUN, importance="okay"),
    ],
    "t2": [
        Question(
            text="Why do cats purr?",
            importance="vital",
            rule="and",
            answers=(Answer("Contentment", ("c1",)), Answer("Healing")),
        )
    ],
}


@pytest.fixture
def topics():
    return [make_topic("t1", "the colour of the sky"), make_topic("t2", "why cats purr")]


def write_banks(write_file, *records, name="banks.jsonl") -> Path:
    return write_file(name, "".join(json.dumps(record) + "\n" for record in records))


def autojudge_nugget_models():
    """autojudge_base's NuggetBank and NuggetBanks, their two modules loaded by path (the package's own import
    reaches for dependencies the reference install leaves out)."""
    spec = importlib.util.find_spec("autojudge_base")
    assert spec is not None and spec.submodule_search_locations, "bin/venv-ready installs autojudge-base"
    folder = Path(next(iter(spec.submodule_search_locations))) / "nugget_data"
    package = types.ModuleType("autojudge_nugget_data")
    package.__path__ = [str(folder)]
    sys.modules.setdefault("autojudge_nugget_data", package)
    data = importlib.import_module("autojudge_nugget_data.nugget_data")
    banks = importlib.import_module("autojudge_nugget_data.nugget_banks")
    return data, banks


def autojudge_nuggetizer_models():
    """autojudge_base's NuggetizerNuggetBank(s), the nuggetizer layout of fact nuggets as the tools read it."""
    autojudge_nugget_models()
    return importlib.import_module("autojudge_nugget_data.nuggetizer.nuggetizer_data")


def test_a_hand_written_v3_file_is_stored_question_by_question(write_file, topics):
    call_command("import_banks", str(write_banks(write_file, LINE_1, LINE_2)), "--name", "gold")
    assert bank_questions("gold") == EXPECTED
    batch = ImportBatch.objects.get(kind="banks")
    assert set(NuggetSet.objects.values_list("form", "kind", "status", "imported_from")) == {
        ("questions", "auto", "submitted", batch.pk)
    }
    assert set(Nugget.objects.values_list("imported_from", flat=True)) == {batch.pk}


def test_the_export_reads_back_identically_and_round_trips(write_file, topics, tmp_path):
    call_command("import_banks", str(write_banks(write_file, LINE_1, LINE_2)), "--name", "gold")
    out = tmp_path / "out.jsonl"
    call_command("export_banks", "--name", "gold", "--output", str(out))
    # Imported again under another name, the banks are the same.
    call_command("import_banks", str(out), "--name", "again")
    assert bank_questions("again") == EXPECTED
    # Imported again under the same name, nothing changes.
    result = banks_import(path=out, name="gold")
    assert (result.unchanged, result.created) == (2, 0)


def test_autojudge_base_reads_the_export_as_stored(write_file, topics, tmp_path):
    call_command("import_banks", str(write_banks(write_file, LINE_1, LINE_2)), "--name", "gold")
    out = tmp_path / "out.jsonl"
    call_command("export_banks", "--name", "gold", "--output", str(out))
    data, banks_module = autojudge_nugget_models()
    banks = [data.NuggetBank.model_validate_json(line) for line in out.read_text().splitlines()]
    container = banks_module.NuggetBanks.from_banks_list(banks)
    assert sorted(container.banks) == ["t1", "t2"]
    assert container.banks["t1"].title_query == "the colour of the sky"
    for topic_id, questions in EXPECTED.items():
        bank = container.banks[topic_id]
        assert list(bank.nugget_bank) == [q.text for q in questions]
        for question, parsed in zip(questions, bank.nugget_bank.values(), strict=True):
            assert parsed.question == question.text
            assert parsed.question_id == hashlib.md5(question.text.encode()).hexdigest()
            assert parsed.importance == question.importance
            assert (parsed.aggregator_type.value if parsed.aggregator_type else "") == question.rule.upper()
            answers = parsed.answers or {}
            assert list(answers) == [a.text for a in question.answers]
            for answer, parsed_answer in zip(question.answers, answers.values(), strict=True):
                assert [ref.doc_id for ref in parsed_answer.references or []] == list(answer.documents)


def test_the_nuggetizer_export_leaves_banks_out_and_reads_back(write_file, topics, tmp_path):
    facts = write_file("facts.jsonl", json.dumps({"qid": "t1", "nuggets": [{"text": "Sky", "importance": "vital"}]}))
    call_command("import_nuggets", str(facts), "--kind", "manual", "--name", "facts")
    call_command("import_banks", str(write_banks(write_file, LINE_1)), "--name", "gold")
    out = tmp_path / "facts.jsonl"
    call_command("export_nuggets", "--nuggets", "facts", "--output", str(out))
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {"qid": "t1", "query": "the colour of the sky", "nuggets": [{"text": "Sky", "importance": "vital"}]}
    ]
    nuggetizer = autojudge_nuggetizer_models()
    parsed = [nuggetizer.NuggetizerNuggetBank.model_validate_json(line) for line in out.read_text().splitlines()]
    assert [(bank.qid, bank.query, [(n.text, n.importance) for n in bank.nuggets]) for bank in parsed] == [
        ("t1", "the colour of the sky", [("Sky", "vital")])
    ]
    call_command("import_nuggets", str(out), "--kind", "manual", "--name", "facts-again")
    assert list(Nugget.objects.filter(nugget_set__name="facts-again").values_list("text", "importance")) == [
        ("Sky", "vital")
    ]
    with pytest.raises(CommandError, match="question bank"):
        call_command("export_nuggets", "--nuggets", "gold", "--output", str(tmp_path / "no.jsonl"))


def test_the_download_link_gives_the_export(client, write_file, topics):
    call_command("import_banks", str(write_banks(write_file, LINE_1)), "--name", "gold")
    client.force_login(make_user(Role.ORGANIZER))
    response = client.get("/collection/download/banks/gold/")
    assert response.status_code == 200
    record = json.loads(b"".join(response.streaming_content).decode())
    assert record["query_id"] == "t1" and list(record["nugget_bank"]) == [SKY, SUN]


@pytest.mark.parametrize(
    ("change", "line", "field", "message"),
    [
        (lambda r: r["nugget_bank"][SKY].update(question_id="abc"), 1, f'nugget_bank["{SKY}"].question_id', "md5"),
        (lambda r: r["nugget_bank"][SKY].update(aggregator_type="SUM"), 1, "aggregator_type", "OR"),
        (lambda r: r["nugget_bank"][SKY].update(importance="high"), 1, "importance", "vital or okay"),
        (lambda r: r["nugget_bank"][SUN].update(importance=3), 1, "importance", "vital or okay"),
        (lambda r: r.update(claim_bank={"c": {"claim": "c", "query_id": "t1"}}), 1, "claim_bank", "import_nuggets"),
        (lambda r: r.update(query_id="t9"), 1, "query_id", "unknown topic"),
        (lambda r: r["nugget_bank"][SKY].update(question="Other?"), 1, f'nugget_bank["{SKY}"].question', "key"),
        (lambda r: r["nugget_bank"][SUN].update(answers=[{"answer": "x", "references": [3]}]), 1, "references[0]", "document id"),
        (lambda r: r["nugget_bank"][SUN].update(answers=[{"answer": "x"}, {"answer": "x"}]), 1, "answers[1]", "repeated"),
        (lambda r: r.update(format_version="v2"), 1, "format_version", "v3"),
    ],
)  # fmt: skip
def test_a_bad_line_names_file_line_and_field_and_writes_nothing(write_file, topics, change, line, field, message):
    record = json.loads(json.dumps(LINE_1))
    change(record)
    path = write_banks(write_file, LINE_2, record) if line == 2 else write_banks(write_file, record, LINE_2)
    with pytest.raises(ImportFailure) as failure:
        banks_import(path=path, name="gold")
    assert failure.value.line == line and field in failure.value.field and message in failure.value.message
    assert str(path) in str(failure.value)
    assert (NuggetSet.objects.count(), Nugget.objects.count(), GoldAnswer.objects.count()) == (0, 0, 0)


def test_a_changed_bank_needs_replace_and_replace_rewrites_it(write_file, topics):
    banks_import(path=write_banks(write_file, LINE_1), name="gold")
    changed = json.loads(json.dumps(LINE_1))
    del changed["nugget_bank"][SUN]
    path = write_banks(write_file, changed, name="changed.jsonl")
    with pytest.raises(ImportFailure, match="--replace"):
        banks_import(path=path, name="gold")
    result = banks_import(path=path, name="gold", replace=True)
    assert result.replaced == 1
    assert bank_questions("gold") == {"t1": EXPECTED["t1"][:1]}
    assert GoldAnswer.objects.count() == 2


def test_a_bank_is_refused_under_the_name_of_fact_nuggets(write_file, topics):
    facts = write_file("facts.jsonl", json.dumps({"qid": "t1", "nuggets": [{"text": "Sky", "importance": "vital"}]}))
    call_command("import_nuggets", str(facts), "--kind", "manual", "--name", "gold")
    with pytest.raises(ImportFailure, match="fact nuggets"):
        banks_import(path=write_banks(write_file, LINE_1), name="gold")


def test_fact_nuggets_are_refused_under_the_name_of_a_bank(write_file, topics):
    banks_import(path=write_banks(write_file, LINE_1), name="gold")
    facts = write_file("facts.jsonl", json.dumps({"qid": "t1", "nuggets": [{"text": "Sky", "importance": "vital"}]}))
    with pytest.raises(CommandError, match="question bank named 'gold'"):
        call_command("import_nuggets", str(facts), "--kind", "manual", "--name", "gold", "--replace")
    assert bank_questions("gold") == {"t1": EXPECTED["t1"]}


@pytest.mark.usefixtures("upload_worker")
def test_the_upload_page_imports_a_bank_file_under_its_name(client, topics):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(make_user(Role.ORGANIZER))
    content = json.dumps(LINE_1) + "\n"
    fields = {"file": SimpleUploadedFile("banks.jsonl", content.encode()), "kind": "banks", "banks_name": "gold"}
    page = client.post(reverse("collection:upload"), fields, follow=True).content.decode()
    assert "Imported banks.jsonl." in page
    assert bank_questions("gold") == {"t1": EXPECTED["t1"]}
    refused = {"file": SimpleUploadedFile("banks.jsonl", content.encode()), "kind": "banks", "banks_name": ""}
    assert "Required for banks." in client.post(reverse("collection:upload"), refused, follow=True).content.decode()


def test_a_nuggetizer_file_written_by_autojudge_base_is_imported(write_file, topics):
    nuggetizer = autojudge_nuggetizer_models()
    bank = nuggetizer.NuggetizerNuggetBank(
        qid="t2",
        query="why cats purr",
        nuggets=[
            nuggetizer.NuggetizerNugget(text="Cats purr when content", importance="vital"),
            nuggetizer.NuggetizerNugget(text="Purring may heal", importance="okay"),
        ],
    )
    path = write_file("nuggetizer.jsonl", bank.model_dump_json(exclude_none=True) + "\n")
    call_command("import_nuggets", str(path), "--kind", "auto", "--name", "nuggetizer")
    nugget_set = NuggetSet.objects.get(name="nuggetizer")
    assert (nugget_set.topic_id, nugget_set.form) == ("t2", "facts")
    assert list(nugget_set.nuggets.order_by("position").values_list("text", "importance")) == [
        ("Cats purr when content", "vital"),
        ("Purring may heal", "okay"),
    ]
