"""The support prompts of the automatic support job.

The default is the prompt of Thakur et al. (SIGIR 2025), kept byte for byte in
`support_thakur.txt`, sent as one user message at temperature 0.1; its answer
names "Full Support", "Partial Support" or "No Support". The project's first
prompt, written from the protocol's definitions and answered FS, PS or NS,
stays as version 1: jobs made with it keep it.
"""

from pathlib import Path

from assessor.jobs.llm.prompts import PromptText, prompt_file

SUPPORT_PROJECT = PromptText(
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

SUPPORT = PromptText(
    name="support",
    system="",
    user=prompt_file(Path(__file__).with_name("support_thakur.txt")),
    params=(("temperature", 0.1),),
    earlier=(SUPPORT_PROJECT,),
)
