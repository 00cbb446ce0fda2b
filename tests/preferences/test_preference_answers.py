"""An LLM's preference read as the reference's converters read it, and the prompt as the reference sends it."""

from pathlib import Path

import pytest

from assessor.jobs.engine import job_run_sync
from assessor.jobs.llm.parsing import AnswerUnusable
from assessor.jobs.llm.prompts import prompt_messages, prompt_template_get
from assessor.models import Answer, LLMCall
from preferences.llm import Reading, preference_read, preferences_job_create
from preferences.models import PreferenceLabel
from preferences.prompts import FOLDER, PREFERENCE_MUST_DECIDE, PREFERENCE_TIES
from reports.texts import request_texts
from tests.llm_server import Reply

FIXTURES = Path(__file__).with_name("fixtures")
SHARED_PROMPTS = Path(__file__).resolve().parents[3] / "shared" / "prompts" / "prefnugget"


def answer(value: str, confidence: str = "0.9") -> str:
    return (
        f"[[ ## reasoning ## ]]\nBoth are fine.\n\n[[ ## better_passage ## ]]\n{value}\n\n"
        f"[[ ## confidence ## ]]\n{confidence}\n\n[[ ## completed ## ]]"
    )


@pytest.mark.parametrize(
    ("value", "ties", "must_decide"),
    [
        ("1", 1, 1),
        ("2", 2, 2),
        ("0", 0, 0),  # must-decide: no 1 or 2 named, the reference's 0
        ("Passage 2", 2, 2),
        ("'1'", 1, 1),
        ("12", None, 0),  # no digit as a word of its own
        ("neither", None, 0),
        ("0 or 2", 0, 2),  # the first allowed digit
    ],
)
def test_the_label_is_the_first_allowed_digit(value, ties, must_decide):
    assert preference_read(answer(value), must_decide=False).label == ties
    assert preference_read(answer(value), must_decide=True).label == must_decide


def test_confidence_and_reasoning_are_kept():
    assert preference_read(answer("1", "0.75"), must_decide=False) == Reading(1, 0.75, "Both are fine.")
    assert preference_read(answer("1", "0.6, or so"), must_decide=False).confidence == 0.6


def test_a_confidence_that_is_no_number_is_unusable_as_the_reference_requires_a_float():
    with pytest.raises(AnswerUnusable, match="confidence"):
        preference_read(answer("1", "very"), must_decide=False)


@pytest.mark.parametrize(
    "raw",
    ["1", "The first one.", "[[ ## reasoning ## ]]\nhm\n\n[[ ## confidence ## ]]\n0.5", answer("")],
)
def test_an_answer_without_the_field_is_unusable(raw):
    with pytest.raises(AnswerUnusable, match="better_passage"):
        preference_read(raw, must_decide=False)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("prompt", "example"), [(PREFERENCE_TIES, "pn1_pref_ties"), (PREFERENCE_MUST_DECIDE, "pn1_pref_must_decide")]
)
def test_the_bee_pair_is_the_message_the_reference_sent(kiddie, prompt, example):
    """The kiddie example of the published prompts: request `bee`, run1's report as passage 1, run2's as 2."""
    template = prompt_template_get(prompt.name, text=prompt)
    request = request_texts(["bee"])["bee"]
    texts = dict(Answer.objects.filter(topic_id="bee").values_list("run__run_id", "text"))
    messages = prompt_messages(
        template,
        query_title=request.title,
        query_background=request.background,
        query_problem=request.problem_statement,
        passage_1=texts["run1"],
        passage_2=texts["run2"],
    )
    assert messages[1] == {"role": "user", "content": (FIXTURES / f"{example}.user_example.txt").read_text()}
    assert messages[0]["role"] == "system" and messages[0]["content"].startswith("Your input fields are:")


@pytest.mark.skipif(not SHARED_PROMPTS.is_dir(), reason="the published prompts are in ../shared, not in this clone")
@pytest.mark.parametrize("stem", ["pn1_pref_ties", "pn1_pref_must_decide"])
def test_the_system_messages_are_the_published_ones_byte_for_byte(stem):
    name = f"{stem}.system.txt"
    assert (FOLDER / name).read_bytes() == (SHARED_PROMPTS / name).read_bytes()


@pytest.mark.django_db
def test_an_answer_the_reference_adapter_refuses_is_asked_again_with_the_reason(llm_server, kiddie):
    """Through the LLM client and the fake server: one pair, its first answers refused as the adapter refuses
    them, then one in another case and spacing, given twice, read as the adapter reads it."""
    tolerant = (
        "Thinking. [[## Reasoning ##]] The second is clearer.\n[[ ## BETTER_PASSAGE ## ]] 1\n"
        "[[ ## better passage ## ]]\n2\n[[##confidence##]] 0.7 (fairly sure)"
    )
    llm_server.script(
        Reply.literal(answer("1", "very")),  # no number in the confidence
        Reply.literal(answer("null")),  # a label saying null: missing
        Reply.literal(tolerant),
    )
    job = preferences_job_create(name="odd", topics=["bee"], runs=["run1", "run2"])
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.done_items, job.failed_items, llm_server.count) == (1, 0, 3)
    label = PreferenceLabel.objects.get(source__name="odd")
    assert (label.label, label.confidence, label.reasoning) == (2, 0.7, "The second is clearer.")
    calls = list(LLMCall.objects.filter(job=job).order_by("pk"))
    assert [call.parsed_ok for call in calls] == [False, False, True]
    assert "[[ ## confidence ## ]] section: 'very' is not a number" in calls[0].error
    assert "no value in [[ ## better_passage ## ]]" in calls[1].error
    assert calls[1].messages[-1]["content"].startswith("Your answer could not be used: the [[ ## confidence")
