"""A topic id read from a file, as the topic's stored key in the campaign in effect (assessor.models.keys).

Files name topics as their campaign publishes them ("2024-145979"); the database keys a topic of any campaign
but the first as "<id>@<slug>". An importer reads the campaign once (`FileTopicIds`) and maps each id it reads;
an id holding "@" is refused with its file, line and field, so that a key always reads back one way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from assessor.importing.base import ImportFailure
from assessor.models import Campaign, Topic
from assessor.models.keys import TopicIdRefused, topic_id_checked, topic_key
from assessor.models.scope import campaign_in_effect


def file_topic_id(topic_id: str, *, path: str | Path, line: int | None, field: str) -> str:
    """`topic_id` as a file gives it, refused (naming file, line and field) if it holds "@"."""
    try:
        return topic_id_checked(topic_id)
    except TopicIdRefused as exc:
        raise ImportFailure(str(exc), path=path, line=line, field=field) from None


# A topic's stored key, its id and the campaign's suffix together, fits the Topic table's key column.
KEY_MAX_CHARS = Topic._meta.get_field("id").max_length or 64


class FileTopicIds:
    """The stored keys of one file's topic ids: the campaign in effect read once, when the file's reading begins."""

    def __init__(self, campaign: Campaign | None = None) -> None:
        self.campaign = campaign or campaign_in_effect()

    def key(self, topic_id: str, *, path: str | Path, line: int | None, field: str) -> str:
        """The stored key of the topic a file names `topic_id` at this line and field."""
        key = topic_key(file_topic_id(topic_id, path=path, line=line, field=field), self.campaign)
        if len(key) > KEY_MAX_CHARS:
            raise ImportFailure(
                f"the topic id {topic_id!r} is too long for this campaign: with its suffix "
                f"{self.campaign.key_suffix!r} it takes {len(key)} of the {KEY_MAX_CHARS} characters a topic's key has",
                path=path,
                line=line,
                field=field,
            )
        return key

    def record_key(
        self, record: Mapping[str, Any], fields: Sequence[str], topic_id: str, *, path: str | Path, line: int
    ) -> str:
        """The stored key of `topic_id`, read from the first of `fields` the JSON record has."""
        field = next((name for name in fields if name in record), fields[0])
        return self.key(topic_id, path=path, line=line, field=field)


def listed_topic_keys(topic_ids: Sequence[str] | None) -> list[str] | None:
    """The stored keys of the topic ids a person listed (a command's --topics), in the campaign in effect; None
    (every topic) stays None. TopicIdRefused for an id holding "@"."""
    if topic_ids is None:
        return None
    campaign = campaign_in_effect()
    return [topic_key(topic_id_checked(topic_id), campaign) for topic_id in topic_ids]


def command_topic_keys(topic_ids: Sequence[str] | None) -> list[str] | None:
    """`listed_topic_keys` of a command's --topics: a refused id is the command's error."""
    try:
        return listed_topic_keys(topic_ids)
    except TopicIdRefused as exc:
        raise CommandError(f"--topics: {exc}") from None
