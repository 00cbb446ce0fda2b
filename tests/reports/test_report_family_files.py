"""The report family's input files under the rules every file obeys (assessor/importing/base.py): lone
surrogates, numbers out of range or not numbers, ids outside the id rule, a preference file of aggregates
only, citations to documents nobody has, banks over the workspace's caps. Each refused by file, line and
field, on the command line and on the upload page, with nothing written."""

import json
import math
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.importing.base import ImportFailure
from assessor.models import Answer, ImportBatch, LabelSource, Segment, Topic
from grades.models import GradeLabel
from nuggets.bankfiles import banks_import
from nuggets.models import GoldAnswer, NuggetSet
from nuggets.workspace import MAX_ANSWER_DOCUMENTS, MAX_ANSWERS
from preferences.models import PreferenceLabel
from reports.importing import reports_import, requests_import
from reports.models import ReportDocument, ReportLayout, ReportRequest
from tests.grades.conftest import BANK, store_bank
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

pytestmark = pytest.mark.django_db

LONE = "\ud800"  # half of a UTF-16 pair: json.dumps writes it as the escape \ud800
SURROGATE_MESSAGE = (
    "holds a lone surrogate (an escape from \\ud800 to \\udfff without its pair), which is no character: "
    "no text may hold it"
)


@pytest.fixture
def kiddie():
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)
    store_bank("qbank", BANK)


def line(record: dict) -> str:
    return json.dumps(record) + "\n"


def request(**changes) -> dict:
    return {"request_id": "new", "title": "a new request", **changes}


def report(**changes) -> dict:
    return {
        "metadata": {"team_id": "team", "run_id": "new", "topic_id": "leaf"},
        "responses": [{"text": "Leaves are green.", "citations": ["Chlorophyll"]}],
        **changes,
    }


def bank(**question_changes) -> dict:
    question = {"question": "Why are leaves green?", "answers": [{"answer": "chlorophyll", "references": ["d1"]}]}
    return {"query_id": "leaf", "nugget_bank": [{**question, **question_changes}]}


def grade(**changes) -> dict:
    return {"run_id": "run1", "query_id": "bee", "question": BANK["bee"][0], "grade": 3, **changes}


def comparison(**changes) -> dict:
    record = {"run_id": "run1", "run_id2": "run2", "query_id": "bee", "better_passage": 1, "confidence": 0.9}
    return {**record, "reasoning": "", "_type": "comparison", **changes}


# kind -> the command, its options, the upload page's options, and a good first line
FILES = {
    "report_requests": ("import_requests", [], {}, line(request(request_id="first"))),
    "reports": (
        "import_reports",
        [],
        {},
        line(report(metadata={"team_id": "t", "run_id": "first", "topic_id": "bee"})),
    ),
    "banks": ("import_banks", ["--name", "newbank"], {"banks_name": "newbank"}, line({**bank(), "query_id": "bee"})),
    "grade_file": (
        "import_grades",
        ["--name", "newgrades", "--bank", "qbank"],
        {"grade_source": "newgrades", "grade_bank": "qbank"},
        line(grade(question=BANK["bee"][1])),
    ),
    "preference_checkpoint": (
        "import_preferences",
        ["--name", "newprefs"],
        {"preference_source": "newprefs"},
        line(comparison(run_id2="run3")),
    ),
}


def stored() -> tuple:
    """Everything a report-family file can write."""
    return (
        ImportBatch.objects.count(),
        Topic.objects.count(),
        ReportRequest.objects.count(),
        Answer.objects.count(),
        ReportLayout.objects.count(),
        ReportDocument.objects.count(),
        Segment.objects.count(),
        NuggetSet.objects.count(),
        GoldAnswer.objects.count(),
        GradeLabel.objects.count(),
        PreferenceLabel.objects.count(),
        LabelSource.objects.count(),
    )


def command_error(kind: str, path) -> str:
    command, options, _, _ = FILES[kind]
    with pytest.raises(CommandError) as failure:
        call_command(command, str(path), *options, stdout=StringIO(), stderr=StringIO())
    return str(failure.value)


def refused(kind: str, write_file, content: str, *, field: str, message: str) -> None:
    """The file of a good line then `content` is refused at line 2 and `field`, by the command, writing nothing."""
    before = stored()
    path = write_file("bad.jsonl", FILES[kind][3] + content)
    assert f"bad.jsonl, line 2, field {field!r}: {message}" in command_error(kind, path)
    assert stored() == before


def upload_page(client, kind: str, content: str) -> str:
    file = SimpleUploadedFile("bad.jsonl", (FILES[kind][3] + content).encode())
    response = client.post(reverse("collection:upload"), {"kind": kind, "file": file, **FILES[kind][2]}, follow=True)
    assert response.status_code == 200
    return response.content.decode()


# --- lone surrogates -------------------------------------------------------------------------------------

SURROGATES = [
    ("report_requests", line(request(title=f"t{LONE}")), "title"),
    ("report_requests", line(request(background=f"b{LONE}")), "background"),
    ("reports", line(report(responses=[{"text": f"t{LONE}", "citations": []}])), "responses[0].text"),
    ("reports", line(report(documents={"d1": {"text": f"x{LONE}"}})), "documents.d1.text"),
    (
        "reports",
        line(report(metadata={"team_id": "t", "run_id": "new", "topic_id": "leaf", "note": LONE})),
        "metadata.note",
    ),
    ("banks", line(bank(question=f"Why{LONE}?")), "nugget_bank[0].question"),
    (
        "banks",
        line(bank(answers=[{"answer": "a", "references": [f"d{LONE}"]}])),
        "nugget_bank[0].answers[0].references[0]",
    ),
    ("grade_file", line(grade(reasoning=f"r{LONE}")), "reasoning"),
    ("grade_file", line(grade(question=f"q{LONE}")), "question"),
    ("preference_checkpoint", line(comparison(reasoning=f"r{LONE}")), "reasoning"),
]
SURROGATE_IDS = [f"{kind}-{field}" for kind, _, field in SURROGATES]


@pytest.mark.parametrize(("kind", "content", "field"), SURROGATES, ids=SURROGATE_IDS)
def test_a_lone_surrogate_is_refused_by_file_line_and_field(kiddie, write_file, kind, content, field):
    assert "\\ud800" in content  # the file holds the escape
    refused(kind, write_file, content, field=field, message=SURROGATE_MESSAGE)


@pytest.mark.parametrize(("kind", "content", "field"), SURROGATES[::3], ids=SURROGATE_IDS[::3])
def test_the_upload_page_names_a_lone_surrogate_by_line_and_field(
    kiddie, organizer, upload_worker, kind, content, field
):
    before = stored()
    page = upload_page(organizer, kind, content)
    assert "<dt>Line</dt><dd>2</dd>" in page
    assert f'<dt>Field</dt><dd class="mono">{field}</dd>' in page
    assert "UnicodeEncodeError" not in page
    assert stored() == before


def test_a_lone_surrogate_in_a_key_or_escaped_in_capitals_is_refused(kiddie, write_file):
    path = write_file("key.jsonl", line(report(documents={f"d{LONE}": {"text": "x"}})).replace("\\ud800", "\\uDBFF"))
    with pytest.raises(ImportFailure) as failure:
        reports_import(path=path)
    assert (failure.value.line, failure.value.field) == (1, "documents.d\\udbff")
    assert failure.value.message == SURROGATE_MESSAGE
    str(failure.value).encode()  # the error itself can be shown


def test_a_surrogate_pair_is_one_character_and_imported(kiddie, write_file):
    path = write_file("pair.jsonl", line(request(title="leaves \U0001f342")))
    assert "\\ud83c\\udf42" in path.read_text()
    requests_import(path=path)
    assert ReportRequest.objects.get(topic_id="new").title == "leaves \U0001f342"


# --- numbers ---------------------------------------------------------------------------------------------

NUMBERS = [
    ("report_requests", line(request(limit=10**30)), "limit", "expected a whole number from 1 to 2,147,483,647, got a whole number of 31 digits"),
    ("report_requests", line(request(word_limit=400.0)), "word_limit", "expected a whole number from 1 to 2,147,483,647, got 400.0"),
    ("report_requests", line(request(limit=2**31)), "limit", "expected a whole number from 1 to 2,147,483,647, got 2147483648"),
    ("reports", line(report(responses=[{"text": "a", "citations": {"d1": math.nan}}])), "responses[0].citations.d1", "expected a finite number, got NaN"),
    ("reports", line(report(responses=[{"text": "a", "citations": {"d1": math.inf}}])), "responses[0].citations.d1", "expected a finite number, got Infinity"),
    ("reports", line(report(responses=[{"text": "a", "citations": {"d1": 10**400}}])), "responses[0].citations.d1", "expected a finite number, got a whole number of 401 digits"),
    ("reports", line(report(metadata={"team_id": "t", "run_id": "new", "topic_id": "leaf", "score": [-math.inf]})), "metadata.score[0]", "expected a finite number, got -Infinity"),
    ("banks", line(bank(importance=2.0)), "nugget_bank[0].importance", "2.0 is not an importance (vital or okay, or the weight 2 or 1)"),
    ("banks", line(bank(importance="2")), "nugget_bank[0].importance", "'2' is not an importance (vital or okay, or the weight 2 or 1)"),
    ("grade_file", line(grade(grade="3")), "grade", "expected a whole number from 0 to 5, got the string '3'"),
    ("grade_file", line(grade(grade=3.0)), "grade", "expected a whole number from 0 to 5, got 3.0"),
    ("grade_file", line(grade(grade=math.nan)), "grade", "expected a whole number from 0 to 5, got NaN"),
    ("grade_file", line(grade(grade=True)), "grade", "expected a whole number from 0 to 5, got true"),
    ("grade_file", line(grade(confidence=math.nan)), "confidence", "expected a finite number, got NaN"),
    ("grade_file", line(grade(confidence="0.9")), "confidence", "expected a finite number, got the string '0.9'"),
    ("preference_checkpoint", line(comparison(better_passage=1.0)), "better_passage", "expected a whole number from 0 to 2, got 1.0"),
    ("preference_checkpoint", line(comparison(better_passage="1")), "better_passage", "expected a whole number from 0 to 2, got the string '1'"),
    ("preference_checkpoint", line(comparison(confidence=math.inf)), "confidence", "expected a finite number, got Infinity"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "content", "field", "message"), NUMBERS, ids=[f"{n[0]}-{n[2]}" for n in NUMBERS])
def test_a_number_out_of_range_or_not_a_number_is_refused_by_field(kiddie, write_file, kind, content, field, message):
    refused(kind, write_file, content, field=field, message=message)


def test_a_whole_number_too_long_for_python_is_refused_by_line(kiddie, write_file):
    path = write_file(
        "digits.jsonl", line(request()) + '{"request_id": "x", "title": "t", "limit": ' + "9" * 5000 + "}\n"
    )
    before = stored()
    message = command_error("report_requests", path)
    assert "digits.jsonl, line 2: not valid JSON here: a whole number of more than 4,300 digits" in message
    assert stored() == before


# --- ids -------------------------------------------------------------------------------------------------

RULE = "an id is letters, digits and . _ - # + : @ ( ) ~ = only"
IDS = [
    ("report_requests", line(request(request_id="new\n")), "request_id", f"'new\\n' holds a newline: {RULE}"),
    ("reports", line(report(metadata={"team_id": "t", "run_id": "new", "topic_id": "leaf\n"})), "metadata.topic_id", f"'leaf\\n' holds a newline: {RULE}"),
    ("reports", line(report(metadata={"team_id": "t", "run_id": " new", "topic_id": "leaf"})), "metadata.run_id", f"' new' holds a space: {RULE}"),
    ("reports", line(report(references=["d1 "], responses=[{"text": "a", "citations": [0]}])), "references[0]", f"'d1 ' holds a space: {RULE}"),
    ("banks", line({**bank(), "query_id": "leaf\n"}), "query_id", f"'leaf\\n' holds a newline: {RULE}"),
    ("banks", line(bank(answers=[{"answer": "a", "references": ["d\t1"]}])), "nugget_bank[0].answers[0].references[0]", f"'d\\t1' holds a tab: {RULE}"),
    ("banks", line(bank(answers=[{"answer": "a", "references": [{"doc_id": "a/b"}]}])), "nugget_bank[0].answers[0].references[0].doc_id", f"'a/b' holds '/': {RULE}"),
    ("banks", line(bank(answers=[{"answer": "a", "references": ["<script>"]}])), "nugget_bank[0].answers[0].references[0]", f"'<script>' holds '<': {RULE}"),
    ("grade_file", line(grade(doc_id="d 1")), "doc_id", f"'d 1' holds a space: {RULE}"),
    ("grade_file", line(grade(doc_id="<script>")), "doc_id", f"'<script>' holds '<': {RULE}"),
    ("grade_file", line(grade(run_id="run1\n")), "run_id", f"'run1\\n' holds a newline: {RULE}"),
    ("grade_file", line(grade(query_id="bee ")), "query_id", f"'bee ' holds a space: {RULE}"),
    ("preference_checkpoint", line(comparison(run_id2="run3\t")), "run_id2", f"'run3\\t' holds a tab: {RULE}"),
    ("preference_checkpoint", line(comparison(query_id="bee/1")), "query_id", f"'bee/1' holds '/': {RULE}"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "content", "field", "message"), IDS, ids=[f"{n[0]}-{n[2]}" for n in IDS])
def test_an_id_outside_the_id_rule_is_refused_never_stripped(kiddie, write_file, kind, content, field, message):
    refused(kind, write_file, content, field=field, message=message)


# --- a preference file without preferences ---------------------------------------------------------------


def test_a_preference_file_of_aggregates_only_is_refused_and_claims_no_name(
    kiddie, write_file, organizer, upload_worker
):
    aggregate = {"run_id": "run1", "topic_id": "bee", "borda_score": 1, "win_frac": 1.0, "_type": "aggregate"}
    path = write_file("aggregates.jsonl", line(aggregate) + line({**aggregate, "run_id": "run2", "borda_score": -1}))
    before = stored()
    message = command_error("preference_checkpoint", path)
    assert (
        'aggregates.jsonl: holds no preferences (no "_type": "comparison" line), only aggregates, which are computed '
        "from the preferences and not imported: nothing to import"
    ) in message
    assert stored() == before
    assert not LabelSource.objects.filter(name="newprefs").exists()
    file = SimpleUploadedFile("aggregates.jsonl", path.read_bytes())
    page = organizer.post(
        reverse("collection:upload"),
        {"kind": "preference_checkpoint", "file": file, **FILES["preference_checkpoint"][2]},
        follow=True,
    ).content.decode()
    assert "holds no preferences" in page and "Nothing was imported." in page
    assert not LabelSource.objects.filter(name="newprefs").exists()


# --- citations to documents nobody has -------------------------------------------------------------------


def test_documents_found_neither_in_the_file_nor_the_collection_are_imported_with_a_warning(kiddie, write_file):
    given = {"Given": {"text": "A document the file gives."}}
    lines = [
        report(responses=[{"text": "a", "citations": ["Chlorophyll", "Nowhere1", "Given", "Later"]}]),
        report(
            metadata={"team_id": "t", "run_id": "new", "topic_id": "bee"},
            responses=[{"text": "b", "citations": ["Nowhere2", "Given"]}],
            documents=given,
        ),
        report(metadata={"team_id": "t", "run_id": "new", "topic_id": "cloud"}, documents={"Later": {"text": "x"}}),
    ]
    path = write_file("unfound.jsonl", "".join(line(record) for record in lines))
    err = StringIO()
    call_command("import_reports", str(path), stdout=StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        f"warning: {path}, line 1: the report of run new for topic leaf cites 1 documents found neither in the file "
        "nor in the collection: Nowhere1; they are kept as ids without text until their segments are imported",
        f"warning: {path}, line 2: the report of run new for topic bee cites 1 documents found neither in the file "
        "nor in the collection: Nowhere2; they are kept as ids without text until their segments are imported",
    ]
    assert Answer.objects.filter(run__run_id="new").count() == 3
    assert set(Segment.objects.filter(pk__startswith="Nowhere").values_list("pk", "text")) == {
        ("Nowhere1", ""),
        ("Nowhere2", ""),
    }


def test_the_upload_page_shows_the_unfound_documents(kiddie, organizer, upload_worker):
    file = SimpleUploadedFile(
        "unfound.jsonl", line(report(responses=[{"text": "a", "citations": ["Nowhere"]}])).encode()
    )
    page = organizer.post(reverse("collection:upload"), {"kind": "reports", "file": file}, follow=True).content.decode()
    assert "cites 1 documents found neither in the file nor in the collection: Nowhere" in page


# --- banks over the workspace's caps ---------------------------------------------------------------------


def test_a_bank_over_the_workspaces_caps_is_refused_by_field(kiddie, write_file):
    answers = [{"answer": f"answer {n}", "references": [f"d{n}"]} for n in range(MAX_ANSWERS)]
    documents = [f"d{n}" for n in range(MAX_ANSWER_DOCUMENTS)]
    at_caps = bank(answers=[{**answers[0], "references": documents}, *answers[1:]])
    banks_import(path=write_file("caps.jsonl", line(at_caps)), name="caps")
    assert GoldAnswer.objects.filter(nugget__nugget_set__name="caps").count() == MAX_ANSWERS
    for record, field, message in (
        (
            bank(answers=[*answers, {"answer": "one more"}]),
            "nugget_bank[0].answers",
            f"{MAX_ANSWERS + 1} answers: a question holds at most {MAX_ANSWERS} (the bank workspace's cap)",
        ),
        (
            bank(answers=[{"answer": "a", "references": [*documents, "d-more"]}]),
            "nugget_bank[0].answers[0].references",
            f"{MAX_ANSWER_DOCUMENTS + 1} documents: an answer cites at most {MAX_ANSWER_DOCUMENTS} "
            "(the bank workspace's cap)",
        ),
    ):
        refused("banks", write_file, line(record), field=field, message=message)
