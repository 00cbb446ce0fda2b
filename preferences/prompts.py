"""The preference prompts PrefNugget sends: ties allowed (1, 2 or 0, the default) or must-decide (1 or 2).

The system messages are the reference's byte for byte (prompts/*.system.txt); the user message is its
fields in DSPy's chat layout (prompts/*.user.txt). They carry no sampling parameters of their own: a call
has the endpoint's temperature.
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


PREFERENCE_TIES = _prompt("prefnugget-preference", "pn1_pref_ties")
PREFERENCE_MUST_DECIDE = _prompt("prefnugget-preference-must-decide", "pn1_pref_must_decide")
