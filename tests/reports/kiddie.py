"""The kiddie report collection in demo/data (MIT licence: see its README), as the report tests read it."""

from tests.builders import REPO

KIDDIE = REPO / "demo" / "data" / "kiddie"
KIDDIE_TOPICS = KIDDIE / "topics" / "kiddie-topics.jsonl"
KIDDIE_RUNS = sorted((KIDDIE / "runs" / "repgen").glob("run*.jsonl"))
