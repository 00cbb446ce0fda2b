"""The answer cache: the call log itself, looked up by key.

The key is the model, the prompt name and version, the temperature and the
messages of the first ask. A re-ask chain that ended in a usable answer is
logged under the key of its first ask, so that a re-run finds the usable
answer at once and makes no call at all; answers that could not be used are
never served from the cache, so failed items are really tried again.
"""

import hashlib
import json

from django.db import connections, router

from assessor.models import LLMCall, PromptTemplate


def cache_key(*, model: str, prompt: PromptTemplate, temperature: float, messages: list[dict[str, str]]) -> str:
    material = json.dumps(
        [model, prompt.name, prompt.version, temperature, messages], ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(material.encode()).hexdigest()


def usable_answers_sql(connection, *, keys: str = "cache_key = %s") -> str:
    """The usable answers logged under a key (its one parameter; `keys`: another test of the key, such as
    `cache_key = ANY(%s)` for several), by the (cache_key) index: a cache hit is never a hit's own log, and an answer
    that could not be used is never served."""
    table = connection.ops.quote_name(LLMCall._meta.db_table)
    return f"SELECT cache_key, id, raw_response FROM {table} WHERE {keys} AND parsed_ok AND NOT from_cache"


def cache_lookup(key: str) -> str | None:
    """The first usable answer logged under `key`, or None.

    Plain SQL on the (cache_key) index: every ask looks here once or twice, and building the query through the ORM
    cost more CPU than the look itself. The first is chosen here, not by ORDER BY id LIMIT 1: on statistics older
    than a long job's growth of the table, PostgreSQL planned that as a walk of the primary key in order, filtering
    every row on a miss. A key has one usable answer, or a few.
    """
    connection = connections[router.db_for_read(LLMCall)]
    with connection.cursor() as cursor:
        cursor.execute(usable_answers_sql(connection), [key])
        rows = cursor.fetchall()
    return min(rows, key=lambda row: row[1])[2] if rows else None
