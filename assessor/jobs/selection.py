"""Turning the --topics / --runs of a launch into stored rows of the campaign in effect, with clear errors."""

from assessor.collection.runs import AmbiguousRun, campaign_runs, run_aliases, run_match
from assessor.jobs.engine import JobRequestInvalid
from assessor.models import Run, Topic
from assessor.models.keys import KEY_SEPARATOR, topic_keys


def topics_select(topic_ids: list[str] | None) -> list[Topic]:
    """The named topics (all when None or empty), in id order.

    An id is the topic's as the campaign's files give it, or its stored key (which holds "@"), as a form passes it.
    """
    if not topic_ids:
        return list(Topic.objects.order_by("id"))
    keys = {topic_id: topic_id for topic_id in topic_ids if KEY_SEPARATOR in topic_id}
    keys.update(topic_keys([topic_id for topic_id in topic_ids if topic_id not in keys]))
    found = Topic.objects.in_bulk(list(keys.values()))
    unknown = [topic_id for topic_id in topic_ids if keys[topic_id] not in found]
    if unknown:
        raise JobRequestInvalid(f"unknown topic(s): {', '.join(unknown)}")
    return sorted(found.values(), key=lambda topic: topic.id)


def runs_select(run_ids: list[str] | None) -> list[Run]:
    """The campaign's named runs (all when None or empty); ids match as in every import (team prefixes, aliases)."""
    runs = {run.run_id: run for run in campaign_runs().order_by("run_id")}
    if not run_ids:
        return list(runs.values())
    selected: list[Run] = []
    unknown = []
    aliases = run_aliases()
    for run_id in run_ids:
        try:
            stored = run_match(run_id, runs, aliases)
        except AmbiguousRun as exc:
            raise JobRequestInvalid(str(exc)) from None
        if stored is None:
            unknown.append(run_id)
        elif runs[stored] not in selected:
            selected.append(runs[stored])
    if unknown:
        raise JobRequestInvalid(f"unknown run(s): {', '.join(unknown)}")
    return selected


def chunks(items: list, size: int) -> list[list]:
    return [items[start : start + size] for start in range(0, len(items), size)]
