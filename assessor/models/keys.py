"""A topic's stored key: its id as the files give it, made unique across campaigns.

Two campaigns may both number a topic "300". The first campaign keeps the ids
as they are (a database made before campaigns keeps every key); every other
campaign's topics are stored as "<id>@<slug>" (`Campaign.key_suffix`). Files,
pages and exports show `published_id`, the id as the campaign's files have it.
An id holding "@" is refused where topics are imported, so a key reads back one way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assessor.models.scope import campaign_in_effect

if TYPE_CHECKING:
    from assessor.models.campaigns import Campaign

KEY_SEPARATOR = "@"


class TopicIdRefused(ValueError):
    pass


def topic_id_checked(topic_id: str) -> str:
    """`topic_id` if a topic may have it; importers name the file, line and field of a refusal."""
    if KEY_SEPARATOR in topic_id:
        raise TopicIdRefused(f"a topic id may not hold {KEY_SEPARATOR!r}: {topic_id!r}")
    return topic_id


def topic_key(topic_id: str, campaign: Campaign | None = None) -> str:
    """The stored key of the topic `topic_id` of `campaign` (default: the campaign in effect)."""
    suffix = (campaign or campaign_in_effect()).key_suffix
    return topic_id + suffix if suffix else topic_id


def topic_keys(topic_ids: list[str] | set[str] | tuple[str, ...], campaign: Campaign | None = None) -> dict[str, str]:
    """Each id's stored key, the campaign read once."""
    suffix = (campaign or campaign_in_effect()).key_suffix
    return {topic_id: topic_id + suffix for topic_id in topic_ids}


def published_id(key: str) -> str:
    """The id a topic's files and pages show for the stored key `key`."""
    return key.split(KEY_SEPARATOR, 1)[0]
