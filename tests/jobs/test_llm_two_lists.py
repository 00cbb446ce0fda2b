"""An answer with two lists is ambiguous, fenced or not: the model is asked again, then the call fails."""

from functools import partial

import pytest

from assessor.jobs.llm.client import LLMAnswerFailed, llm_session
from assessor.jobs.llm.parsing import AnswerUnusable, parse_label_list, parse_string_list
from assessor.jobs.llm.prompts import prompt_messages, prompt_template_get
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db

LABELS = ("support", "partial_support", "not_support")
NUGGETS = ["Paris is the capital", "Seine river flows", "Lyon food"]
# The test server's rule gives these for NUGGETS against the passage below.
EXPECTED = ["support", "partial_support", "not_support"]
CORRECTION = "\nWait, that was wrong. The correct labels are [\"not_support\", \"support\", \"support\"]."
SELF_CORRECTIONS = {
    "fenced-first": '```json\n["support", "partial_support", "not_support"]\n```' + CORRECTION,
    "fenced-second": 'First guess: ["support", "support", "support"]\n```json\n["support", "partial_support", "not_support"]\n```',
    "unfenced": '["support", "partial_support", "not_support"]' + CORRECTION,
}


def assign_ask(session):
    prompt = prompt_template_get("assign")
    messages = prompt_messages(
        prompt,
        n=len(NUGGETS),
        query="capital of France",
        passage="Paris is the capital of France, on the Seine.",
        nuggets=str(NUGGETS).replace("'", '"'),
    )
    return session.ask(prompt, messages, partial(parse_label_list, expected=len(NUGGETS), allowed=LABELS))


@pytest.mark.parametrize("answer", SELF_CORRECTIONS.values(), ids=SELF_CORRECTIONS.keys())
def test_two_lists_are_refused_as_ambiguous(answer):
    with pytest.raises(AnswerUnusable, match="several lists"):
        parse_string_list(answer)


def test_a_fenced_list_beside_prose_citing_numbers_is_read():
    answer = 'As passage [1] says:\n```json\n["a", "b"]\n```\nSee also [2].'
    assert parse_string_list(answer) == ["a", "b"]


@pytest.mark.parametrize("answer", SELF_CORRECTIONS.values(), ids=SELF_CORRECTIONS.keys())
def test_a_self_correcting_answer_is_asked_again(llm_server, answer):
    llm_server.script(Reply.literal(answer))
    assert assign_ask(llm_session()) == EXPECTED
    assert llm_server.count == 2
    assert "several lists" in llm_server.requests[1]["messages"][-1]["content"]


def test_a_model_that_keeps_correcting_itself_fails(llm_server, settings):
    settings.LLM_MAX_REASKS = 1
    answer = SELF_CORRECTIONS["fenced-first"]
    llm_server.script(Reply.literal(answer), Reply.literal(answer))
    with pytest.raises(LLMAnswerFailed) as failure:
        assign_ask(llm_session())
    assert "several lists" in failure.value.reason
    assert llm_server.count == 2
