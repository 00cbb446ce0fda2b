"""The verdicts app on the answer-label kit (assessor.labelkit): its prompt, its labels and what they score, the fake
LLM server's answer to its prompt, and its URL module (the kit's pages of its people's work)."""

from assessor.contracts import PromptText
from assessor.jobs.llm.fake_rules import line_after, long_words
from assessor.labelkit.parts import answer_labels_register, answer_labels_urls
from assessor.labelkit.spec import AnswerLabels
from assessor.registry import FakeAnswer, register_fake_answer
from tests.verdicts.models import VERDICT_JOB, VERDICT_WORK, Verdict

VERDICTS = AnswerLabels(
    name="verdicts",
    title="Answer verdicts",
    noun="verdict",
    model=Verdict,
    choices=[("yes", "y", "yes", "yes"), ("no", "n", "no", "no")],
    values={"yes": 1.0, "no": 0.0},
    metric="yes",
    job_kind=VERDICT_JOB,
    work_kind=VERDICT_WORK,
    prompt=PromptText(
        name="answer_verdict",
        system="You are YesNoJudgeLLM, an assistant that says whether an answer answers a question.",
        user="Question: {query}\nAnswer: {answer}\n"
        "Does the answer answer the question? Reply with exactly one word: yes or no.",
        params=(("temperature", 0.0), ("max_tokens", 5)),
    ),
    about_job="An LLM says, answer by answer, whether the answer answers its topic's question.",
    about_work="The assessor says, answer by answer, whether the answer answers the question.",
    about_scores="Run means of the share of answers judged to answer their question (a missing answer counts 0).",
    ranked_by="share of yes",
)
app_name = VERDICTS.name  # this module is also the URLconf of the kit's pages of people's work
urlpatterns = answer_labels_urls(VERDICTS)


def _fake_verdict(user: str) -> str:
    """The fake LLM server's verdict: yes when the answer shares a word of four letters or more with the question."""
    return "yes" if long_words(line_after(user, "Question: ")) & long_words(line_after(user, "Answer: ")) else "no"


def register() -> None:
    answer_labels_register(VERDICTS, url_module=__name__)
    # Known by how its system message starts; a server started with --flip says the opposite.
    register_fake_answer(
        FakeAnswer("You are YesNoJudgeLLM", _fake_verdict, flip={"yes": "no", "no": "yes"}.__getitem__)
    )
