"""Crucible's extraction prompt: DSPy's chat layout (as PrefNugget's prompts), with the objective the seed
paper prints for its sentence generation (prompts/README.md). It carries no sampling parameters of its own:
a call has the endpoint's temperature."""

from pathlib import Path

from assessor.jobs.llm.prompts import PromptText, prompt_file

FOLDER = Path(__file__).with_name("prompts")

EXTRACT = PromptText(
    name="crucible-extract",
    system=prompt_file(FOLDER / "crucible_extract.system.txt"),
    user=prompt_file(FOLDER / "crucible_extract.user.txt"),
)
