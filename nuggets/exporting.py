"""Nugget sets, written in the nuggetizer's format that `import_nuggets` reads."""

import json
from collections.abc import Iterator
from itertools import groupby

from nuggets.models import Nugget, NuggetSet

FETCH_CHUNK = 5000


def nugget_set_names() -> list[str]:
    return list(NuggetSet.objects.order_by("name").values_list("name", flat=True).distinct())


def nugget_set_require(*, name: str) -> None:
    """Raise LookupError, naming the sets that exist, unless nugget sets of this name exist."""
    if not NuggetSet.objects.filter(name=name).exists():
        known = ", ".join(nugget_set_names()) or "none"
        raise LookupError(f"no nugget sets named {name!r}; nugget sets: {known}")


def nuggets_lines(*, name: str) -> Iterator[str]:
    """One topic a line, by topic id: `{"qid", "query", "nuggets": [{"text", "importance"}]}`.

    Nuggets come in their set's order; a nugget without importance (an LLM
    draft) has no "importance" key, and a set without nuggets is left out (the
    format has no empty list). Raises LookupError for an unknown name.
    """
    nugget_set_require(name=name)
    rows = (
        Nugget.objects.filter(nugget_set__name=name)
        .order_by("nugget_set__topic_id", "position", "id")
        .values_list("nugget_set__topic_id", "nugget_set__topic__query", "text", "importance")
        .iterator(chunk_size=FETCH_CHUNK)
    )
    for (topic_id, query), nuggets in groupby(rows, key=lambda row: (row[0], row[1])):
        record = {
            "qid": topic_id,
            "query": query,
            "nuggets": [
                {"text": text, "importance": importance} if importance else {"text": text}
                for _, _, text, importance in nuggets
            ],
        }
        yield json.dumps(record, ensure_ascii=False) + "\n"
