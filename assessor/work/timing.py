"""An assessor's active time: the gaps between actions, without the time away, and how it reads."""

from collections.abc import Sequence
from datetime import datetime

from django.conf import settings

# A gap between two actions (or heartbeats) longer than this is time away from
# the topic; the WORK_IDLE_SECONDS setting (from the environment) overrides it.
IDLE_LIMIT_SECONDS = 300.0

def idle_limit_seconds() -> float:
    return float(getattr(settings, "WORK_IDLE_SECONDS", IDLE_LIMIT_SECONDS))


def active_increment(*, last_activity_at: datetime | None, now: datetime, idle_limit_seconds: float) -> float:
    """Seconds to credit for the gap since the previous action or heartbeat.

    A gap longer than the idle limit counts nothing: the assessor was away, and
    we cannot tell when they left, so the whole gap is excluded (the action that
    ends it starts a new stretch of work).
    """
    if last_activity_at is None:
        return 0.0
    gap = (now - last_activity_at).total_seconds()
    if gap <= 0 or gap > idle_limit_seconds:
        return 0.0
    return gap


def active_seconds_of(times: Sequence[datetime], *, idle_limit_seconds: float) -> float:
    """The active time of a whole sequence of action times (the sum of its counted gaps)."""
    total = 0.0
    for previous, current in zip(times, times[1:], strict=False):
        total += active_increment(last_activity_at=previous, now=current, idle_limit_seconds=idle_limit_seconds)
    return total


def duration_label(seconds: float | None) -> str:
    """`1 h 05 min`, `12 min 30 s`, `45 s`."""
    total = int(round(seconds or 0))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"
