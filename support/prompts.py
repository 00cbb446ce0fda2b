"""The support prompt, written from the protocol's definitions of the three support labels."""

from assessor.jobs.llm.prompts import PromptText

SUPPORT = PromptText(
    name="support",
    system=(
        "You are SupportJudgeLLM, an intelligent assistant that judges whether a cited passage supports a "
        "sentence of an answer."
    ),
    user=(
        "Judge whether the passage supports the sentence, using the following labels. FS (full support): all "
        "the information in the sentence is supported by the passage. PS (partial support): some of the "
        "information in the sentence is supported by the passage, some is not. NS (no support): the passage "
        "does not support any part of the sentence. Judge only from the passage, not from what you know.\n"
        "Search Query: {query}\n"
        "Sentence: {sentence}\n"
        "Passage: {passage}\n"
        "Answer with exactly one label: FS, PS or NS. Do not explain.\n"
        "Label:"
    ),
)
