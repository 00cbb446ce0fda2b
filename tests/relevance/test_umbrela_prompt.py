"""UMBRELA's published relevance prompt: stored byte for byte, versioned after the project's first one.

The prompt keeps the name "umbrela" and its hashes from before the relevance app
existed, so that the PromptTemplate rows a database holds, and the LLM answers
cached under them, are still the ones the job finds.
"""

import hashlib
from pathlib import Path

import pytest

from assessor.jobs.llm.prompts import PromptText, prompt_sha256, prompt_template_get
from assessor.models import PromptTemplate
from relevance.prompts import UMBRELA, UMBRELA_PROJECT

ROOT = Path(__file__).resolve().parents[2]
PROMPT_FILE = ROOT / "relevance" / "umbrela_relevance.txt"
# The published prompts beside the checkout (../shared/prompts/), when they are there.
SHARED_PROMPT = ROOT.parent / "shared" / "prompts" / "umbrela_relevance.txt"

# sha256 of the file as the track's organizers published it (docs/llm.md).
PUBLISHED_SHA256 = "c92537a4f97293dfe1fd5f3dccc3f7dea44e3ace65061a74dbf8afc833441546"
# PromptTemplate.sha256 of the two versions as databases store them (the hashes computed
# before the prompt moved into the relevance app).
STORED = {
    1: "e906ab0034c603a4a5316d721401075453435d0611f2e2688b62df538fd9ed8f",
    2: "d1598c4463f13f95920204008a1c505c9968ab62bb27427a76a2482d39ebe4bd",
}


def test_the_prompt_file_is_the_published_bytes():
    assert hashlib.sha256(PROMPT_FILE.read_bytes()).hexdigest() == PUBLISHED_SHA256


@pytest.mark.django_db
def test_the_file_and_the_stored_prompt_are_the_shared_published_copy():
    if not SHARED_PROMPT.is_file():
        pytest.skip(f"the published prompts are not at {SHARED_PROMPT.parent}")
    published = SHARED_PROMPT.read_bytes()
    assert PROMPT_FILE.read_bytes() == published
    stored = prompt_template_get("umbrela")
    assert hashlib.sha256(stored.user.encode()).hexdigest() == hashlib.sha256(published).hexdigest()


def test_the_default_is_the_published_text_with_the_tracks_parameters():
    assert UMBRELA.name == "umbrela"
    assert UMBRELA.system == "" and UMBRELA.user.encode() == PROMPT_FILE.read_bytes()
    assert dict(UMBRELA.params) == {
        "temperature": 0,
        "max_tokens": 100,
        "top_p": 1,
        "frequency_penalty": 0.5,
        "presence_penalty": 0,
    }
    # Trailing spaces on some lines are part of the published text.
    assert "nothing to do with the query, \n" in UMBRELA.user


def test_the_versions_hash_as_databases_stored_them():
    assert (prompt_sha256(UMBRELA_PROJECT), prompt_sha256(UMBRELA)) == (STORED[1], STORED[2])


@pytest.mark.django_db
def test_a_new_database_stores_the_projects_first_prompt_as_version_one():
    stored = prompt_template_get("umbrela")
    assert (stored.version, stored.sha256) == (2, STORED[2])
    assert (stored.system, stored.user, stored.params) == ("", UMBRELA.user, dict(UMBRELA.params))
    assert hashlib.sha256(stored.user.encode()).hexdigest() == PUBLISHED_SHA256
    older = PromptTemplate.objects.get(name="umbrela", version=1)
    assert (older.system, older.user, older.params, older.sha256) == (
        UMBRELA_PROJECT.system,
        UMBRELA_PROJECT.user,
        {},
        STORED[1],
    )
    # Asking again stores nothing new.
    assert prompt_template_get("umbrela").pk == stored.pk
    assert PromptTemplate.objects.filter(name="umbrela").count() == 2


@pytest.mark.django_db
def test_a_database_that_has_the_first_prompt_keeps_its_number():
    first = prompt_template_get(
        "umbrela", text=PromptText(name="umbrela", system=UMBRELA_PROJECT.system, user=UMBRELA_PROJECT.user)
    )
    assert first.version == 1
    assert prompt_template_get("umbrela").version == 2
