"""URLs name a topic by its published id, the id its campaign's files give it.

A topic is stored under its key, "<id>@<slug>" outside the first campaign
(`assessor.models.keys`); the URL `/c/<slug>/collection/topics/300/` names it as
the campaign's files and pages do. Building a URL turns a key into the published
id; a view turns the id back into the key of the campaign in effect
(`topic_key`), which the page's scope has set by then. A URL holding the
separator names no topic: not found.
"""

from django.urls import register_converter

from assessor.models.keys import KEY_SEPARATOR, published_id


class PublishedTopicIdConverter:
    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        if KEY_SEPARATOR in value:
            raise ValueError(f"a topic's URL names its published id, without {KEY_SEPARATOR!r}")
        return value

    def to_url(self, value: str) -> str:
        return published_id(str(value))


# Once, however many URL modules import this one: `<topic:topic_id>`.
register_converter(PublishedTopicIdConverter, "topic")
