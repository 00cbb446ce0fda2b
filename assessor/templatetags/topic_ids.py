"""`{{ key|published }}`: a topic's id as the campaign's files have it, for a page that holds its stored key.

A topic's stored key is "<id>@<slug>" outside the first campaign (assessor.models.keys); pages show the
published id, and so do URLs (assessor.campaigns.converters). A Topic shows it by itself (`{{ topic }}`);
this filter is for the templates that hold a key only (`work.topic_id`, a row's `topic_id`).
"""

from django import template

from assessor.models.keys import published_id

register = template.Library()


@register.filter
def published(key: object) -> str:
    return published_id(str(key)) if key is not None else ""
