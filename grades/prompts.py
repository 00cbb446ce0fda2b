"""The grading prompt PrefNugget sends: a passage (a report's text, or a cited document's) graded 0-5 on one
question of the topic's bank.

The system message is the reference's byte for byte (prompts/pn3_grade.system.txt); the user message is its
two fields in DSPy's chat layout (prompts/pn3_grade.user.txt). It carries no sampling parameters of its own.
"""

from pathlib import Path

from assessor.jobs.llm.prompts import PromptText, prompt_file

FOLDER = Path(__file__).with_name("prompts")

GRADE = PromptText(
    name="prefnugget-grade",
    system=prompt_file(FOLDER / "pn3_grade.system.txt"),
    user=prompt_file(FOLDER / "pn3_grade.user.txt"),
)
