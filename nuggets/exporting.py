"""Nugget sets, written in the nuggetizer's format that `import_nuggets` reads.

Like every export, it holds final work only (assessor.scoring.lifecycle): a list
still being edited (never submitted, or reopened) or drafted by a job still
running is left out, and said so, unless open work is included (`--include-open`,
the pages' `?open=1`), when it is written and said to be provisional.
"""

import json
from collections.abc import Iterator
from itertools import groupby

from assessor.models.keys import published_id
from assessor.scoring.lifecycle import open_included
from nuggets.models import Nugget, NuggetSet
from nuggets.selectors import nugget_sets_counted_q

FETCH_CHUNK = 5000


FACTS = NuggetSet.Form.FACTS


def nugget_set_names() -> list[str]:
    """The names of fact nugget sets (question banks are exported by nuggets.bankfiles)."""
    return list(NuggetSet.objects.filter(form=FACTS).order_by("name").values_list("name", flat=True).distinct())


def nugget_set_require(*, name: str) -> None:
    """Raise LookupError, naming the sets that exist, unless nugget sets of this name exist."""
    if not NuggetSet.objects.filter(name=name, form=FACTS).exists():
        if NuggetSet.objects.filter(name=name).exists():
            raise LookupError(f"{name!r} names question banks, not fact nuggets: export them with export_banks")
        known = ", ".join(nugget_set_names()) or "none"
        raise LookupError(f"no nugget sets named {name!r}; nugget sets: {known}")


def nuggets_lines(*, name: str) -> Iterator[str]:
    """One topic a line, by topic id: `{"qid", "query", "nuggets": [{"text", "importance"}]}`.

    Nuggets come in their set's order; a nugget without importance (an LLM
    draft) has no "importance" key, and a set without nuggets is left out (the
    format has no empty list). Raises LookupError for an unknown name.
    """
    nugget_set_require(name=name)
    if not NuggetSet.objects.filter(nugget_sets_counted_q(), name=name, form=FACTS).exists():
        raise LookupError(
            f"the nugget sets named {name!r} are all still open (being edited, or drafted by a running job): "
            "nothing final to export; include open work to export them as they stand"
        )
    rows = (
        Nugget.objects.filter(nugget_sets_counted_q("nugget_set__"), nugget_set__name=name, nugget_set__form=FACTS)
        .order_by("nugget_set__topic_id", "position", "id")
        .values_list("nugget_set__topic_id", "nugget_set__topic__query", "text", "importance")
        .iterator(chunk_size=FETCH_CHUNK)
    )
    for (topic_id, query), nuggets in groupby(rows, key=lambda row: (row[0], row[1])):
        record = {
            "qid": published_id(topic_id),
            "query": query,
            "nuggets": [
                {"text": text, "importance": importance} if importance else {"text": text}
                for _, _, text, importance in nuggets
            ],
        }
        yield json.dumps(record, ensure_ascii=False) + "\n"


def nuggets_notes(*, name: str) -> list[str]:
    """What keeps the export of the sets named `name` from being final: its open lists, by topic."""
    open_topics = sorted(
        NuggetSet.objects.filter(name=name)
        .exclude(status=NuggetSet.Status.SUBMITTED)
        .values_list("topic_id", flat=True)
    )
    if not open_topics:
        return []
    shown_ids = [published_id(topic_id) for topic_id in open_topics[:5]]
    shown = ", ".join(shown_ids) + (", ..." if len(open_topics) > 5 else "")
    if open_included():
        return [f"{len(open_topics)} list(s) named {name!r} are still open ({shown}): exported as they stand, provisional."]
    return [f"{len(open_topics)} list(s) named {name!r} are still open ({shown}): left out of the export."]
