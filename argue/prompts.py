"""The ARGUE-style yes/no prompts: this project's own wording (AUTO-ARGUE's is not available to it).

Both are in the chat layout of the second family's prompts (`[[ ## name ## ]]` sections in, the same out):
a `reasoning` section, then the yes/no field. An answer whose field says neither yes nor no is read as no
(`argue.llm.yes_no_read`). The name carries the version of the wording ("-v1"); the stored prompt versions
(assessor.jobs.llm.prompts) keep every text a job used.
"""

from assessor.jobs.llm.prompts import PromptText

_ANSWER_LAYOUT = (
    "Respond with the corresponding output fields, starting with the field `[[ ## reasoning ## ]]`, then "
    "`[[ ## {field} ## ]]` (must be formatted as yes or no), and then ending with the marker for "
    "`[[ ## completed ## ]]`."
)

CITATION_SUPPORT = PromptText(
    name="argue-citation-support-v1",
    system=(
        "You are ArgueCitationJudge, a careful assessor of reports. A report sentence cites a document. "
        "Say whether the document supports the sentence: yes when everything the sentence states can be "
        "verified from the document alone, no when any part of it cannot (judge only from the document, "
        "not from what you know).\n"
        "Your input fields are:\n"
        "1. `request` (str): the report request the sentence was written for\n"
        "2. `sentence` (str): the report sentence\n"
        "3. `document` (str): the cited document\n"
        "Your output fields are:\n"
        "1. `reasoning` (str)\n"
        "2. `supports` (yes or no): does the document support the sentence?"
    ),
    user=(
        "[[ ## request ## ]]\n{request}\n\n"
        "[[ ## sentence ## ]]\n{sentence}\n\n"
        "[[ ## document ## ]]\n{document}\n\n" + _ANSWER_LAYOUT.format(field="supports")
    ),
)

ANSWER_AGREEMENT = PromptText(
    name="argue-answer-agreement-v1",
    system=(
        "You are ArgueAnswerJudge, a careful assessor of reports. A question about the report's topic has "
        "a gold answer. Say whether the report sentence gives that answer to the question: yes when the "
        "sentence states the gold answer (in any words), no when it states another answer, only part of "
        "it, or nothing about it.\n"
        "Your input fields are:\n"
        "1. `question` (str): the question\n"
        "2. `gold_answer` (str): the question's gold answer\n"
        "3. `sentence` (str): the report sentence\n"
        "Your output fields are:\n"
        "1. `reasoning` (str)\n"
        "2. `agrees` (yes or no): does the sentence agree with the gold answer?"
    ),
    user=(
        "[[ ## question ## ]]\n{question}\n\n"
        "[[ ## gold_answer ## ]]\n{gold_answer}\n\n"
        "[[ ## sentence ## ]]\n{sentence}\n\n" + _ANSWER_LAYOUT.format(field="agrees")
    ),
)
