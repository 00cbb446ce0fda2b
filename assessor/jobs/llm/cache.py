"""The answer cache: the call log itself, looked up by key.

The key is the model, the prompt name and version, the temperature and the
messages of the first ask. A re-ask chain that ended in a usable answer is
logged under the key of its first ask, so that a re-run finds the usable
answer at once and makes no call at all; answers that could not be used are
never served from the cache, so failed items are really tried again.
"""

import hashlib
import json

from assessor.models import LLMCall, PromptTemplate


def cache_key(*, model: str, prompt: PromptTemplate, temperature: float, messages: list[dict[str, str]]) -> str:
    material = json.dumps(
        [model, prompt.name, prompt.version, temperature, messages], ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(material.encode()).hexdigest()


def cache_lookup(key: str) -> LLMCall | None:
    return (
        LLMCall.objects.filter(cache_key=key, parsed_ok=True, from_cache=False).order_by("id").only("raw_response").first()
    )
