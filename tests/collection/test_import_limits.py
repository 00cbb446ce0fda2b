"""Nesting, size, id and text limits: a line or field past its limit is refused by file, line and field.

Every importer is driven through its command and through the upload page; no
traceback, no 500, nothing stored.
"""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils.html import escape

from assessor.importing.base import MAX_JSON_DEPTH, json_depth
from assessor.models import ImportBatch, Run, Segment, Topic, Upload
from assessor.work.roles import Role
from metaeval.models import ImportedScore
from tests.builders import make_user

pytestmark = pytest.mark.django_db

# kind (upload page) -> (command, its required options)
COMMANDS = {
    "topics": ("import_topics", []),
    "segments": ("import_segments", []),
    "qrels": ("import_qrels", ["--source", "nist"]),
    "run": ("import_run", []),
    "nuggets": ("import_nuggets", ["--kind", "manual"]),
    "assignments": ("import_assignments", ["--nuggets", "auto", "--assigner", "manual"]),
    "support": ("import_support", ["--method", "scratch"]),
    "scores": ("import_scores", ["--name", "table"]),
}
UPLOAD_OPTIONS = {
    "source": "nist",
    "nuggets_kind": "manual",
    "assigner_kind": "manual",
    "method_kind": "scratch",
    "scores_name": "table",
}
JSONL_KINDS = ["segments", "run", "nuggets", "assignments", "support"]
NESTING_BOMB = "[" * 200_000 + "]" * 200_000


def x(count: int) -> str:
    return "x" * count


def run_line(**changes) -> dict:
    line = {
        "run_id": "team-run",
        "topic_id": "2024-1",
        "topic": "a query",
        "references": ["d#1"],
        "answer": [{"text": "An answer.", "citations": [0]}],
    }
    return {**line, **changes}


def assignment_line(**changes) -> dict:
    nugget = {"text": "a nugget", "importance": "vital", "assignment": "support"}
    return {
        "qid": "2024-1",
        "query": "q",
        "run_id": "team-run",
        "answer_text": "An answer.",
        "nuggets": [nugget],
        **changes,
    }


def support_line(**changes) -> dict:
    sentence = {"text": "An answer.", "citations": [{"reference": "d#1", "support": "2"}]}
    return {"topic_id": "2024-1", "run_id": "team-run", "sentences": [sentence], **changes}


def jsonl(record: dict) -> str:
    return json.dumps(record) + "\n"


# (kind, content, the field the error names)
OVERSIZED = [
    ("topics", f"{x(65)}\tq\n", "topic_id"),
    ("topics", f"2024-1\t{x(2_001)}\n", "query"),
    ("segments", jsonl({"docid": x(201), "segment": "text"}), "docid"),
    ("segments", jsonl({"docid": "d#1", "segment": x(65_537)}), "segment"),
    ("segments", jsonl({"docid": "d#1", "contents": x(65_537)}), "contents"),
    ("segments", jsonl({"docid": "d#1", "segment": "t", "title": x(2_001)}), "title"),
    ("segments", jsonl({"docid": "d#1", "segment": "t", "url": x(4_001)}), "url"),
    ("qrels", f"2024-1 Q0 {x(201)} 1\n", "docid"),
    ("qrels", f"{x(65)} Q0 d#1 1\n", "topic_id"),
    ("run", jsonl(run_line(run_id=x(201))), "run_id"),
    ("run", jsonl(run_line(topic_id=x(65))), "topic_id"),
    ("run", jsonl(run_line(topic=x(2_001))), "topic"),
    ("run", jsonl(run_line(references=[x(201)])), "references[0]"),
    ("run", jsonl(run_line(answer=[{"text": x(32_001), "citations": []}])), "answer[0].text"),
    ("run", jsonl(run_line(answer=[{"text": x(16_000), "citations": []}] * 3)), "answer"),
    ("nuggets", jsonl({"qid": "2024-1", "nuggets": [{"text": x(1_001), "importance": "vital"}]}), "nuggets[0].text"),
    ("nuggets", jsonl({"qid": x(65), "nuggets": [{"text": "n", "importance": "vital"}]}), "qid"),
    ("assignments", jsonl(assignment_line(run_id=x(201))), "run_id"),
    ("assignments", jsonl(assignment_line(answer_text=x(32_001))), "answer_text"),
    (
        "assignments",
        jsonl(assignment_line(nuggets=[{"text": x(1_001), "importance": "vital", "assignment": "support"}])),
        "nuggets[0].text",
    ),
    ("support", jsonl(support_line(run_id=x(201))), "run_id"),
    ("support", jsonl(support_line(sentences=[{"text": x(32_001), "citations": []}])), "sentences[0].text"),
    ("support", jsonl(support_line(sentences=[{"text": x(16_000), "citations": []}] * 3)), "sentences"),
    (
        "support",
        jsonl(support_line(sentences=[{"text": "s", "citations": [{"reference": x(201), "support": "2"}]}])),
        "sentences[0].citations[0].reference",
    ),
    ("scores", f"{x(201)}\t2024-1\tV\t0.5\n", "run_id"),
    ("scores", f"r\t{x(65)}\tV\t0.5\n", "topic_id"),
    ("scores", f"r\t2024-1\t{x(41)}\t0.5\n", "metric"),
]
OVERSIZED_IDS = [f"{kind}-{field}" for kind, _, field in OVERSIZED]


def command_error(kind: str, path) -> str:
    command, options = COMMANDS[kind]
    with pytest.raises(CommandError) as failure:
        call_command(command, str(path), *options)
    return str(failure.value)


def upload_page(client, kind: str, name: str, content: str) -> str:
    """The page an upload leads to, once a worker imported it (the `upload_worker` fixture)."""
    client.force_login(make_user(Role.ORGANIZER))
    file = SimpleUploadedFile(name, content.encode())
    response = client.post(reverse("collection:upload"), {"kind": kind, "file": file, **UPLOAD_OPTIONS}, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def page_failure(file: str, line: int, field: str = "") -> list[str]:
    """What the upload page shows of a failure at this place."""
    shown = ['<dt>File</dt><dd class="mono">' + file + "</dd>", f"<dt>Line</dt><dd>{line}</dd>"]
    if field:
        shown.append('<dt>Field</dt><dd class="mono">' + field + "</dd>")
    return shown


def nothing_stored() -> bool:
    return not (ImportBatch.objects.exists() or Topic.objects.exists() or Segment.objects.exists())


@pytest.mark.parametrize("kind", JSONL_KINDS)
def test_a_command_refuses_deep_nesting_by_line(write_file, kind):
    path = write_file("bomb.jsonl", "\n" + NESTING_BOMB + "\n")
    assert "bomb.jsonl, line 2: lists and objects nest deeper than 16 levels" in command_error(kind, path)
    assert nothing_stored()


@pytest.mark.parametrize("kind", JSONL_KINDS)
def test_the_upload_page_refuses_deep_nesting_by_line(client, upload_worker, kind):
    page = upload_page(client, kind, "bomb.jsonl", NESTING_BOMB + "\n")
    assert all(part in page for part in page_failure("bomb.jsonl", 1))
    assert "lists and objects nest deeper than 16 levels" in page
    assert nothing_stored()


def test_nesting_inside_strings_does_not_count():
    assert json_depth(json.dumps({"text": "[" * 100, "quoted": '"]]]]' + "{" * 50, "list": [[[1]], []]})) == 4
    assert json_depth("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)) == MAX_JSON_DEPTH + 1


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 500, 5_000])
def test_any_depth_over_the_limit_gets_the_same_error(write_file, depth):
    record = '{"docid": "d#1", "segment": "t", "title": ' + "[" * depth + "]" * depth + "}\n"
    message = command_error("segments", write_file("deep.jsonl", record))
    assert "deep.jsonl, line 1: lists and objects nest deeper than 16 levels" in message


@pytest.mark.parametrize(("kind", "content", "field"), OVERSIZED, ids=OVERSIZED_IDS)
def test_a_command_refuses_an_oversized_field_by_line_and_field(write_file, kind, content, field):
    path = write_file("big.txt", "\n" + content)
    message = command_error(kind, path)
    assert f"big.txt, line 2, field '{field}': " in message
    assert "characters, over the limit of" in message
    assert nothing_stored()


@pytest.mark.parametrize(("kind", "content", "field"), OVERSIZED, ids=OVERSIZED_IDS)
def test_the_upload_page_refuses_an_oversized_field_by_line_and_field(client, upload_worker, kind, content, field):
    page = upload_page(client, kind, "big.txt", content)
    assert all(part in page for part in page_failure("big.txt", 1, field))
    assert "characters, over the limit of" in page
    assert nothing_stored()


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_a_line_over_a_megabyte_is_refused_before_parsing(write_file, client, upload_worker, kind):
    content = "\n" + x(3 << 20) + "\n"
    assert "huge.txt, line 2: the line is longer than 1,048,576 characters" in command_error(
        kind, write_file("huge.txt", content)
    )
    page = upload_page(client, kind, "huge.txt", content)
    assert all(part in page for part in page_failure("huge.txt", 2))
    assert "the line is longer than 1,048,576 characters" in page
    assert nothing_stored()


def test_the_real_files_stay_under_the_limits(write_file):
    call_command("import_topics", "tests/fixtures/collection/topics.tsv")
    call_command("import_segments", "tests/fixtures/collection/segments.jsonl")
    call_command("import_run", "tests/fixtures/collection/run_l31_70b.jsonl")
    assert Segment.objects.exclude(text="").exists()


# --- ids: one rule for every importer ---------------------------------------------------

# (kind, content, the field the error names, the character it names)
BAD_IDS = [
    ("topics", "2024/1\tq\n", "topic_id", "'/'"),
    ("topics", "2024 1\tq\n", "topic_id", "a space"),
    ("segments", jsonl({"docid": "d\n1", "segment": "t"}), "docid", "a newline"),
    ("qrels", "2024-1 Q0 d/1 1\n", "docid", "'/'"),
    ("qrels", "2024/1 Q0 d#1 1\n", "topic_id", "'/'"),
    ("run", jsonl(run_line(run_id="team\trun")), "run_id", "a tab"),
    ("run", jsonl(run_line(run_id="team\nrun")), "run_id", "a newline"),
    ("run", jsonl(run_line(topic_id="2024/1")), "topic_id", "'/'"),
    ("run", jsonl(run_line(references=["d\n#1"])), "references[0]", "a newline"),
    ("nuggets", jsonl({"qid": "2024/1", "nuggets": [{"text": "n", "importance": "vital"}]}), "qid", "'/'"),
    ("assignments", jsonl(assignment_line(run_id="team/run")), "run_id", "'/'"),
    ("support", jsonl(support_line(run_id="team run")), "run_id", "a space"),
    (
        "support",
        jsonl(support_line(sentences=[{"text": "s", "citations": [{"reference": "d\t1", "support": "2"}]}])),
        "sentences[0].citations[0].reference",
        "a tab",
    ),
    ("scores", "te/am\t2024-1\tV\t0.5\n", "run_id", "'/'"),
]
BAD_ID_NAMES = [f"{kind}-{field}-{index}" for index, (kind, _, field, _) in enumerate(BAD_IDS)]


@pytest.mark.parametrize(("kind", "content", "field", "character"), BAD_IDS, ids=BAD_ID_NAMES)
def test_a_command_refuses_an_id_outside_the_id_characters(write_file, kind, content, field, character):
    message = command_error(kind, write_file("bad.txt", "\n" + content))
    assert f"bad.txt, line 2, field '{field}': " in message
    assert f"holds {character}: an id is letters, digits and . _ - # + : @ ( ) ~ = only" in message
    assert nothing_stored()


# An id with whitespace at its ends is refused as any other, never stripped and taken ("2024-1\n" is not "2024-1").
UNSTRIPPED_IDS = [
    ("segments", jsonl({"docid": "d#1\n", "segment": "t"}), "docid", "a newline"),
    ("run", jsonl(run_line(run_id="team-run\n")), "run_id", "a newline"),
    ("run", jsonl(run_line(topic_id=" 2024-1")), "topic_id", "a space"),
    ("run", jsonl(run_line(references=["d#1 "])), "references[0]", "a space"),
    ("nuggets", jsonl({"qid": "2024-1\n", "nuggets": [{"text": "n", "importance": "vital"}]}), "qid", "a newline"),
    ("assignments", jsonl(assignment_line(run_id="team-run ")), "run_id", "a space"),
    ("support", jsonl(support_line(run_id="team-run\t")), "run_id", "a tab"),
    (
        "support",
        jsonl(support_line(sentences=[{"text": "s", "citations": [{"reference": " d#1", "support": "2"}]}])),
        "sentences[0].citations[0].reference",
        "a space",
    ),
]


@pytest.mark.parametrize(
    ("kind", "content", "field", "character"),
    UNSTRIPPED_IDS,
    ids=[f"{kind}-{field}" for kind, _, field, _ in UNSTRIPPED_IDS],
)
def test_a_command_refuses_an_id_with_whitespace_at_its_ends_not_stripping_it(
    write_file, kind, content, field, character
):
    message = command_error(kind, write_file("bad.txt", "\n" + content))
    assert f"bad.txt, line 2, field '{field}': " in message
    assert f"holds {character}: an id is letters, digits and . _ - # + : @ ( ) ~ = only" in message
    assert nothing_stored()


@pytest.mark.parametrize(("kind", "content", "field", "character"), BAD_IDS[:3], ids=BAD_ID_NAMES[:3])
def test_the_upload_page_refuses_an_id_outside_the_id_characters(
    client, upload_worker, kind, content, field, character
):
    page = upload_page(client, kind, "bad.txt", content)
    assert all(part in page for part in page_failure("bad.txt", 1, field))
    assert nothing_stored()


def test_the_ids_of_the_real_files_follow_the_rule(write_file):
    # Team prefixes, '+' (KML.cohere+post_processing), '#' and '_' in segment ids, dates with '-'.
    topics = write_file("topics.tsv", "2024-145979\ta query\n")
    call_command("import_topics", str(topics))
    run = write_file("run.jsonl", jsonl(run_line(run_id="KML.cohere+post_processing", topic_id="2024-145979",
                                                 references=["msmarco_v2.1_doc_29_677149#3_1597452"])))  # fmt: skip
    call_command("import_run", str(run))
    assert Segment.objects.filter(docid="msmarco_v2.1_doc_29_677149#3_1597452").exists()


# --- NUL bytes ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_a_nul_byte_is_refused_by_line_before_anything_is_stored(write_file, client, upload_worker, kind):
    content = "\n2024\x00-1\tq\n"
    message = command_error(kind, write_file("nul.txt", content))
    assert "nul.txt, line 2: a NUL byte at character 5: not a text file" in message
    page = upload_page(client, kind, "nul.txt", content)
    assert all(part in page for part in page_failure("nul.txt", 2))
    assert nothing_stored()


ESCAPED_NUL = [
    ("segments", jsonl({"docid": "d#1", "segment": "te\u0000xt"}), "segment"),
    ("run", jsonl(run_line(answer=[{"text": "An\u0000answer.", "citations": [0]}])), "answer[0].text"),
    ("nuggets", jsonl({"qid": "2024-1", "nuggets": [{"text": "a\u0000b", "importance": "vital"}]}), "nuggets[0].text"),
    ("assignments", jsonl(assignment_line(answer_text="An\u0000answer.")), "answer_text"),
    ("support", jsonl(support_line(sentences=[{"text": "s\u0000", "citations": []}])), "sentences[0].text"),
]


@pytest.mark.parametrize(("kind", "content", "field"), ESCAPED_NUL, ids=[kind for kind, _, _ in ESCAPED_NUL])
def test_a_nul_character_written_as_a_json_escape_is_refused_by_field(write_file, kind, content, field):
    assert "\\u0000" in content  # the file holds the escape, not the byte
    message = command_error(kind, write_file("nul.jsonl", "\n" + content))
    assert f"nul.jsonl, line 2, field '{field}': holds a NUL character (\\u0000), which no text may hold" in message
    assert nothing_stored()


# A lone surrogate (half of a UTF-16 pair) written as a JSON escape: SQLite would store it, then fail every
# page and export that shows it. json.dumps writes "\ud800" as that escape.
ESCAPED_SURROGATE = [
    ("segments", jsonl({"docid": "d#1", "segment": "te\ud800xt"}), "segment"),
    ("run", jsonl(run_line(answer=[{"text": "An\udfffanswer.", "citations": [0]}])), "answer[0].text"),
    ("nuggets", jsonl({"qid": "2024-1", "nuggets": [{"text": "a\udbffb", "importance": "vital"}]}), "nuggets[0].text"),
    ("assignments", jsonl(assignment_line(answer_text="An\udc00answer.")), "answer_text"),
    ("support", jsonl(support_line(sentences=[{"text": "s\ud800", "citations": []}])), "sentences[0].text"),
]


@pytest.mark.parametrize(
    ("kind", "content", "field"), ESCAPED_SURROGATE, ids=[kind for kind, _, _ in ESCAPED_SURROGATE]
)
def test_a_lone_surrogate_written_as_a_json_escape_is_refused_by_field(write_file, kind, content, field):
    message = command_error(kind, write_file("lone.jsonl", "\n" + content))
    assert f"lone.jsonl, line 2, field '{field}': holds a lone surrogate" in message
    assert nothing_stored()


def test_a_lone_surrogate_in_a_jsonl_score_file_is_refused_by_field(write_file):
    row = {"run_id": "team-run", "topic_id": "2024-1", "measure": "V\ud800", "value": 0.5}
    path = write_file("lone.jsonl", jsonl({**row, "measure": "V"}) + jsonl(row))
    with pytest.raises(CommandError) as failure:
        call_command("import_scores", str(path), "--name", "table", "--format", "jsonl")
    assert "lone.jsonl, line 2, field 'measure': holds a lone surrogate" in str(failure.value)
    assert not ImportedScore.objects.exists() and nothing_stored()


# The rule for numbers in files: a JSON whole number, in the range a column holds; never a string, a float,
# NaN or a boolean (a support file's sentence and citation ids are checked though not stored).
BAD_NUMBERS = [
    ({"sentenceID": "3"}, "sentences[0].sentenceID", "got the string '3'"),
    (
        {"sentenceID": "9" * 5000},
        "sentences[0].sentenceID",
        "got the string '9999999999999999999999999999999999999999'...",
    ),
    ({"sentenceID": 1.0}, "sentences[0].sentenceID", "got 1.0"),
    ({"sentenceID": float("nan")}, "sentences[0].sentenceID", "got NaN"),
    ({"sentenceID": 10**30}, "sentences[0].sentenceID", "got a whole number of 31 digits"),
    ({"sentenceId": True}, "sentences[0].sentenceId", "got true"),
]


@pytest.mark.parametrize(
    ("given", "field", "got"), BAD_NUMBERS, ids=[field + "-" + got[:12] for _, field, got in BAD_NUMBERS]
)
def test_a_number_outside_the_rule_is_refused_by_field(write_file, given, field, got):
    content = jsonl(support_line(sentences=[{"text": "An answer.", "citations": [], **given}]))
    message = command_error("support", write_file("numbers.jsonl", "\n" + content))
    assert f"numbers.jsonl, line 2, field '{field}': expected a whole number from 0 to 2,147,483,647, {got}" in message
    assert nothing_stored()


# --- ids given as options: the same rule ---------------------------------------------------

# A run id given with --run-id (or the upload page's "Run id") for a file that does not name its run.
BAD_OPTION_RUN_IDS = [("team/run", "'/'"), ("team run", "a space"), ("team\trun", "a tab"), ("team\nrun", "a newline")]
# kind -> (a file of one run's rows without run ids, the command's options)
ONE_RUN_FILES = {
    "assignments": (jsonl({k: v for k, v in assignment_line().items() if k != "run_id"}), COMMANDS["assignments"][1]),
    "scores": ("V\t2024-1\t0.5\nV\tall\t0.5\n", ["--name", "table", "--format", "trec_eval"]),
}


def nothing_imported() -> bool:
    """Nothing but the topic the files answer."""
    return not (ImportBatch.objects.exclude(kind="topics").exists() or Run.objects.exists() or Upload.objects.exists())


@pytest.fixture
def topic(write_file):
    call_command("import_topics", str(write_file("topics.tsv", "2024-1\ta query\n")))


@pytest.mark.parametrize("kind", list(ONE_RUN_FILES))
@pytest.mark.parametrize(("run_id", "character"), BAD_OPTION_RUN_IDS, ids=["slash", "space", "tab", "newline"])
def test_a_command_refuses_a_run_id_option_outside_the_id_characters(write_file, topic, kind, run_id, character):
    content, options = ONE_RUN_FILES[kind]
    path = write_file("one-run.txt", content)
    with pytest.raises(CommandError) as failure:
        call_command(COMMANDS[kind][0], str(path), *options, "--run-id", run_id)
    expected = (
        f"one-run.txt: --run-id: {run_id!r} holds {character}: an id is letters, digits and . _ - # + : @ ( ) ~ = only"
    )
    assert expected in str(failure.value)
    assert nothing_imported()


@pytest.mark.parametrize("kind", list(ONE_RUN_FILES))
def test_a_good_run_id_option_names_the_run(write_file, topic, kind):
    content, options = ONE_RUN_FILES[kind]
    call_command(COMMANDS[kind][0], str(write_file("one-run.txt", content)), *options, "--run-id", "team.run-1")
    if kind == "assignments":
        assert list(Run.objects.values_list("run_id", flat=True)) == ["team.run-1"]
    else:
        assert list(ImportedScore.objects.values_list("run_id", flat=True).distinct()) == ["team.run-1"]


@pytest.mark.parametrize("kind", list(ONE_RUN_FILES))
@pytest.mark.parametrize(("run_id", "character"), BAD_OPTION_RUN_IDS[:3], ids=["slash", "space", "tab"])
def test_the_upload_page_refuses_a_run_id_outside_the_id_characters(
    client, upload_worker, topic, kind, run_id, character
):
    client.force_login(make_user(Role.ORGANIZER))
    content, _ = ONE_RUN_FILES[kind]
    options = {**UPLOAD_OPTIONS, "scores_layout": "trec_eval", "run_id": run_id}
    file = SimpleUploadedFile("one-run.txt", content.encode())
    response = client.post(reverse("collection:upload"), {"kind": kind, "file": file, **options})
    assert response.status_code == 200  # the form again, not a queued upload
    page = response.content.decode()
    assert "Run id" in page
    assert escape(f"{run_id!r} holds {character}: an id is letters, digits and . _ - # + : @ ( ) ~ = only") in page
    assert upload_worker == []
    assert nothing_imported()
