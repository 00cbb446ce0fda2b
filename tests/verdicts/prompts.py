"""The verdict job's prompt: one answer, one yes or no."""

from assessor.jobs.llm.prompts import PromptText

VERDICT = PromptText(
    name="answer_verdict",
    system="You are YesNoJudgeLLM, an assistant that says whether an answer answers a question.",
    user=(
        "Question: {query}\n"
        "Answer: {answer}\n"
        "Does the answer answer the question? Reply with exactly one word: yes or no."
    ),
    params=(("temperature", 0.0), ("max_tokens", 5)),
)
