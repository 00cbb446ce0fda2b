"""The verdicts app's kinds, as stored in the foundation's string columns (labels: `parts.py`)."""

VERDICT_JOB = "answer_verdict"  # a job: an LLM says whether each answer answers its query
VERDICT_WORK = "verdict_manual"  # work: a person says so for each answer of a topic
IMPORT_VERDICTS = "verdicts"  # a file: verdicts in JSONL
LABEL_FAMILY = "verdicts"  # the label family of verdict sources
SCORE_FAMILY = "verdict_sources"  # the score family: one leaderboard per source
