"""The published support prompt: stored byte for byte, versioned after the project's first one.

UMBRELA's relevance prompt has the same tests in tests/relevance/test_umbrela_prompt.py.
"""

import hashlib
from pathlib import Path

import pytest

from assessor.jobs.llm.parsing import AnswerUnusable, parse_final_score, parse_one_phrase
from assessor.jobs.llm.prompts import PromptText, prompt_messages, prompt_template_get
from assessor.models import PromptTemplate
from support.prompts import SUPPORT, SUPPORT_PROJECT

ROOT = Path(__file__).resolve().parents[2]

# sha256 of the file as the track's organizers published it (docs/llm.md).
PUBLISHED = {
    "support/support_thakur.txt": "f8b95146a73e13257b76b910a5a00ec05ab333f140942c37e2ea8cc4cb9382fc",
}


@pytest.mark.parametrize("path", sorted(PUBLISHED))
def test_the_prompt_files_are_the_published_bytes(path):
    assert hashlib.sha256((ROOT / path).read_bytes()).hexdigest() == PUBLISHED[path]


def test_the_default_is_the_published_text_with_the_tracks_parameters():
    assert SUPPORT.system == "" and SUPPORT.user == (ROOT / "support/support_thakur.txt").read_text()
    assert dict(SUPPORT.params) == {"temperature": 0.1}
    assert SUPPORT.user.endswith("Citation: {citation}\n\nResponse:")


@pytest.mark.django_db
def test_a_new_database_stores_the_projects_first_prompt_as_version_one():
    stored = prompt_template_get(SUPPORT.name)
    assert stored.version == 2
    assert (stored.system, stored.user, stored.params) == ("", SUPPORT.user, dict(SUPPORT.params))
    older = PromptTemplate.objects.get(name=SUPPORT.name, version=1)
    assert (older.system, older.user, older.params) == (SUPPORT_PROJECT.system, SUPPORT_PROJECT.user, {})
    # Asking again stores nothing new.
    assert prompt_template_get(SUPPORT.name).pk == stored.pk
    assert PromptTemplate.objects.filter(name=SUPPORT.name).count() == 2


@pytest.mark.django_db
def test_parameters_are_part_of_a_version():
    plain = prompt_template_get("p", text=PromptText(name="p", system="", user="u"))
    warmer = prompt_template_get("p", text=PromptText(name="p", system="", user="u", params=(("temperature", 0.7),)))
    assert (plain.version, warmer.version) == (1, 2)


def test_a_prompt_without_system_text_is_one_user_message():
    template = PromptTemplate(name="x", version=1, system="", user="Query: {query}\nPassage: {passage}")
    assert prompt_messages(template, query="q {x}", passage="p", unused="-") == [
        {"role": "user", "content": "Query: q {x}\nPassage: p"}
    ]


@pytest.mark.parametrize(
    "raw,grade",
    [
        ("##final score: 2", 2),
        ("##final score: 0\n", 0),
        ("M: 2, T: 1\n##final score: 3", 3),
        ("## Final Score: 1.", 1),
        ("##final score: 2\n##final score: 2", 2),
    ],
)
def test_a_final_score_is_read(raw, grade):
    assert parse_final_score(raw, allowed=range(4)) == grade


@pytest.mark.parametrize(
    "raw,reason",
    [
        ("2", "no '##final score: N'"),
        ("final score: 2", "no '##final score: N'"),
        ("##final score: 4", "not an integer from 0 to 3"),
        ("##final score: two", "not an integer"),
        ("##final score: 2.5", "not an integer"),
        ("##final score: 1\n##final score: 3", "several final scores (1, 3)"),
        ("", "no '##final score"),
    ],
)
def test_anything_else_is_not_a_grade(raw, reason):
    with pytest.raises(AnswerUnusable, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse_final_score(raw, allowed=range(4))


PHRASES = ("Full Support", "Partial Support", "No Support")


@pytest.mark.parametrize(
    "raw,phrase",
    [
        ("Full Support", "Full Support"),
        ('"Partial Support"', "Partial Support"),
        ("no support.", "No Support"),
        ("Response: Partial  Support\n", "Partial Support"),
        ("The statement has Full Support from the citation.", "Full Support"),
    ],
)
def test_one_support_phrase_is_a_label(raw, phrase):
    assert parse_one_phrase(raw, phrases=PHRASES) == phrase


@pytest.mark.parametrize(
    "raw,how",
    [
        ("FS", "none"),
        ("Supported", "none"),
        ("Full support or Partial Support", "more than one"),
        ("", "none"),
    ],
)
def test_no_phrase_or_several_is_not_a_label(raw, how):
    with pytest.raises(AnswerUnusable, match=f"names {how} of"):
        parse_one_phrase(raw, phrases=PHRASES)


@pytest.mark.parametrize("raw", ["not full support", "It is NOT Full Support.", "This isn't partial support", "without full support", "Not Full Support; No Support"])
def test_a_negated_phrase_is_not_that_label(raw):
    """"not full support" was read as full support."""
    with pytest.raises(AnswerUnusable, match="negates"):
        parse_one_phrase(raw, phrases=PHRASES)
