"""The prompts of PrefNugget's banks: contrastive extraction (`prefnugget-extract`) and the query-only bank
(`queryonly-questions`).

The system messages are the reference's byte for byte (prompts/*.system.txt); the user message is its fields
in DSPy's chat layout (prompts/*.user.txt), the questions so far as a JSON array. They carry no sampling
parameters of their own: a call has the endpoint's temperature.
"""

from pathlib import Path

from assessor.jobs.llm.prompts import PromptText, prompt_file

FOLDER = Path(__file__).with_name("prompts")


def _prompt(name: str, stem: str) -> PromptText:
    return PromptText(
        name=name,
        system=prompt_file(FOLDER / f"{stem}.system.txt"),
        user=prompt_file(FOLDER / f"{stem}.user.txt"),
    )


EXTRACT = _prompt("prefnugget-extract", "pn2_extract_iterative")
QUERY_ONLY = _prompt("queryonly-questions", "rubric_queryonly_generate")
