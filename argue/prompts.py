"""The ARGUE-style yes/no prompts: this project's own wording (AUTO-ARGUE's is not available to it).

Citation support and answer agreement are in the chat layout of the second family's prompts (`[[ ## name
## ]]` sections in, the same out): a `reasoning` section, then the yes/no field. An answer whose field says
neither yes nor no is read as no (`argue.llm.yes_no_read`).

The checks of a sentence that cites nothing (needs a citation? first instance of its claim? a negative
assertion?) are asked as Auto-ARGUE asks them: a one-word YES or NO answer, read from at most 10 tokens
(`max_tokens` 10 is part of the prompt's version); an answer that is neither is asked again, and one that
still is neither counts as no and is counted as malformed (`argue.llm.bare_yes_no_read`).

The name carries the version of the wording ("-v1"); the stored prompt versions (assessor.jobs.llm.prompts)
keep every text a job used.
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


# Auto-ARGUE reads its YES/NO from at most 10 tokens of the answer.
BARE_YES_NO = (("max_tokens", 10),)
_BARE_ANSWER = "Respond with one word: YES or NO."

NEEDS_CITATION = PromptText(
    name="argue-needs-citation-v1",
    system=(
        "You are ArgueNeedsCitationJudge, a careful assessor of reports. A report sentence cites no document. "
        "Say whether it needs a citation: YES when it makes a claim a reader would want to verify in a source "
        "(a fact, an event, a date, a figure, a finding, someone's position or opinion), NO when it only "
        "introduces, connects or sums up the report's own content, or states common knowledge or an opinion "
        "of the report's own. Respond with ONLY YES or NO."
    ),
    user="[[ ## request ## ]]\n{request}\n\n[[ ## sentence ## ]]\n{sentence}\n\n" + _BARE_ANSWER,
    params=BARE_YES_NO,
)

FIRST_INSTANCE = PromptText(
    name="argue-first-instance-v1",
    system=(
        "You are ArgueFirstInstanceJudge, a careful assessor of reports. A report sentence that needs a "
        "citation cites no document. Say whether it is the first instance of its main claim in the report: YES "
        "when none of the earlier sentences makes that claim, NO when one of them already made it (in the same "
        "or other words, more generally or in more detail). Respond with ONLY YES or NO."
    ),
    user="[[ ## earlier_sentences ## ]]\n{earlier_sentences}\n\n[[ ## sentence ## ]]\n{sentence}\n\n" + _BARE_ANSWER,
    params=BARE_YES_NO,
)

NEGATIVE_ASSERTION = PromptText(
    name="argue-negative-assertion-v1",
    system=(
        "You are ArgueNegativeJudge, a careful assessor of reports. A report sentence cites no document. Say "
        "whether it is a negative assertion: YES when it states that something is not the case, did not "
        "happen, or that there is no evidence, report or information about something; NO otherwise. Respond "
        "with ONLY YES or NO."
    ),
    user="[[ ## sentence ## ]]\n{sentence}\n\n" + _BARE_ANSWER,
    params=BARE_YES_NO,
)
