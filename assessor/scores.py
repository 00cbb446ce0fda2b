"""A table of per-answer scores, the shape every score source shares.

Nugget conditions, support methods and imported score tables all produce a
`Scores`: the official exports write it, the leaderboard shows it, and the
meta-evaluation compares two of them.
"""

from dataclasses import dataclass, field

NUGGET_METRICS = ("A", "Astrict", "V", "Vstrict", "W", "Wstrict", "L")
SUPPORT_METRICS = ("weighted_precision", "weighted_recall")
ALL_TOPICS = "all"


@dataclass
class Scores:
    metrics: tuple[str, ...]
    # (run_id, topic_id) -> metric -> value, for the answers that were evaluated
    per_topic: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    # run_id -> metric -> mean over the evaluated topics (a missing answer counts 0)
    run_means: dict[str, dict[str, float]] = field(default_factory=dict)
    topics: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
