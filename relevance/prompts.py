"""The relevance prompts of the UMBRELA job.

The default is UMBRELA's own prompt (Upadhyay et al. 2024), kept byte for byte
in `umbrela_relevance.txt`, with the parameters the TREC 2024 RAG track sent;
its answer carries the grade as `##final score: N`. The project's first prompt,
written from the protocol's grades and answered by a bare grade, stays as
version 1: jobs made with it keep it.
"""

from pathlib import Path

from assessor.jobs.llm.prompts import PromptText, prompt_file

UMBRELA_PROJECT = PromptText(
    name="umbrela",
    system=(
        "You are RelevanceJudgeLLM, an intelligent assistant that judges how relevant a passage is to a "
        "search query."
    ),
    user=(
        "Given a query and a passage, grade the relevance of the passage to the query on this scale:\n"
        "3 = perfectly relevant: the passage is dedicated to the query and contains the exact answer.\n"
        "2 = highly relevant: the passage has some answer for the query, but the answer may be a bit unclear "
        "or hidden amongst extraneous information.\n"
        "1 = related: the passage seems related to the query but does not answer it.\n"
        "0 = irrelevant: the passage has nothing to do with the query.\n"
        "Consider the intent of the query, how well the passage matches it, and how trustworthy the passage "
        "is, then grade.\n"
        "Search Query: {query}\n"
        "Passage: {passage}\n"
        "Answer with exactly one grade: 0, 1, 2 or 3. Do not explain.\n"
        "Grade:"
    ),
)

UMBRELA = PromptText(
    name="umbrela",
    system="",
    user=prompt_file(Path(__file__).with_name("umbrela_relevance.txt")),
    params=(
        ("temperature", 0.0),
        ("max_tokens", 100),
        ("top_p", 1.0),
        ("frequency_penalty", 0.5),
        ("presence_penalty", 0.0),
    ),
    earlier=(UMBRELA_PROJECT,),
)
