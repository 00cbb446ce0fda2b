"""The published nugget assignment prompt of the TREC 2024 RAG Track (docs/llm.md), word for word."""

from assessor.jobs.llm.prompts import PromptText

ASSIGN = PromptText(
    name="assign",
    system=(
        "You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic nuggets based "
        "on if they are captured by a given passage."
    ),
    user=(
        "Based on the query and passage, label each of the {n} nuggets either as support, partial_support, or "
        "not_support using the following criteria. A nugget that is fully captured in the passage should be "
        "labeled as support. A nugget that is partially captured in the passage should be labeled as "
        "partial_support. If the nugget is not captured at all, label it as not_support. Return the list of "
        "labels in a Pythonic list format (type: List[str]). The list should be in the same order as the input "
        "nuggets. Make sure to provide a label for each nugget.\n"
        "Search Query: {query}\n"
        "Passage: {passage}\n"
        "Nugget List: {nuggets}\n"
        "Only return the list of labels (List[str]). Do not explain.\n"
        "Labels:"
    ),
)
