"""The published nuggetization and importance prompts of the TREC 2024 RAG Track (docs/llm.md), word for word."""

from assessor.jobs.llm.prompts import PromptText

NUGGETIZE = PromptText(
    name="nuggetize",
    system=(
        "You are NuggetizeLLM, an intelligent assistant that can update a list of atomic nuggets to best "
        "provide all the information required for the query."
    ),
    user=(
        "Update the list of atomic nuggets of information (1-12 words), if needed, so they best provide the "
        "information required for the query. Leverage only the initial list of nuggets (if exists) and the "
        "provided context (this is an iterative process). Return only the final list of all nuggets in a "
        "Pythonic list format (even if no updates). Make sure there is no redundant information. Ensure the "
        "updated nugget list has at most 30 nuggets (can be less), keeping only the most vital ones. "
        "Order them in decreasing order of importance. Prefer nuggets that provide more interesting information.\n"
        "Search Query: {query}\n"
        "Context:\n"
        "{context}\n"
        "Search Query: {query}\n"
        "Initial Nugget List: {nuggets}\n"
        "Initial Nugget List Length: {count}\n"
        "Only update the list of atomic nuggets (if needed, else return as is). Do not explain. Always answer "
        'in short nuggets (not questions). List in the form ["a", "b", ...] and a and b are strings with no '
        'mention of ".\n'
        "Updated Nugget List:"
    ),
)

IMPORTANCE = PromptText(
    name="nugget_importance",
    system=(
        "You are NuggetizeScoreLLM, an intelligent assistant that can label a list of atomic nuggets based on "
        "their importance for a given search query."
    ),
    user=(
        "Based on the query, label each of the {n} nuggets either a vital or okay based on the following "
        'criteria. Vital nuggets represent concepts that must be present in a "good" answer; on the other hand, '
        "okay nuggets contribute worthwhile information about the target but are not essential. Return the list "
        "of labels in a Pythonic list format (type: List[str]). The list should be in the same order as the "
        "input nuggets. Make sure to provide a label for each nugget.\n"
        "Search Query: {query}\n"
        "Nugget List: {nuggets}\n"
        "Only return the list of labels (List[str]). Do not explain.\n"
        "Labels:"
    ),
)
