"""The client's `ask_scored`: the answer with its token log-probabilities, from the cache without them, and
asked again past the cache on request; `ask` sends no logprobs option."""

import math

import pytest

from assessor.jobs.llm.client import llm_session
from assessor.jobs.llm.prompts import prompt_messages, prompt_template_get
from assessor.models import LLMCall
from crucible.llm import extraction_read
from crucible.prompts import EXTRACT

pytestmark = pytest.mark.django_db

DOCUMENT = "Honey is made by bees from nectar. Wasps do not. Bees keep honey in combs."


def ask(session, **options):
    prompt = prompt_template_get(EXTRACT.name)
    messages = prompt_messages(
        prompt,
        query_title="bees",
        query_background="",
        query_problem="How is honey made?",
        nugget_text="How do bees make honey?",
        source_document=DOCUMENT,
    )
    return session.ask_scored(prompt, messages, extraction_read, **options)


def test_the_answer_comes_with_its_tokens_probabilities(llm_server):
    scored = ask(llm_session())
    assert llm_server.requests[0]["logprobs"] is True
    # The fake model: the sentences sharing a word of 4+ letters with the question ("bees", "make", "honey").
    assert scored.value.extracted_text == "Honey is made by bees from nectar. Bees keep honey in combs."
    assert scored.value.condensed_sentence == "Honey is made by bees from nectar."
    assert not scored.from_cache and "".join(token.token for token in scored.logprobs) == scored.text
    # The extracted text's tokens have probability (2 + 1) / (3 + 2), s = 2 ("bees", "honey"); the others 1.
    inside = [t for t in scored.logprobs if t.logprob != 0.0]
    assert "".join(t.token for t in inside).strip() == scored.value.extracted_text
    assert all(math.isclose(math.exp(t.logprob), 3 / 5) for t in inside)


def test_a_cached_answer_has_none_and_the_cache_can_be_passed_by(llm_server):
    first = ask(llm_session())
    cached = ask(llm_session())
    assert (cached.from_cache, cached.logprobs, cached.value, cached.cache_key) == (
        True,
        None,
        first.value,
        first.cache_key,
    )
    assert llm_server.count == 1
    fresh = ask(llm_session(), cached=False)
    assert (fresh.from_cache, fresh.logprobs, llm_server.count) == (False, first.logprobs, 2)
    assert LLMCall.objects.filter(from_cache=False).count() == 2


def test_a_plain_ask_sends_no_logprobs_option(llm_server):
    prompt = prompt_template_get(EXTRACT.name)
    messages = [{"role": "user", "content": "hello"}]
    assert llm_session().ask(prompt, messages, str) == "I am a test server."
    assert "logprobs" not in llm_server.requests[0]
