"""The collection's own kinds: the files it imports and the label family of qrels sources.

Every other kind of job, work, file or label belongs to the app that declares it
(its `kinds.py`), and reaches the foundation through the registry only.
"""

TOPICS = "topics"  # a file: topic_id<TAB>query
SEGMENTS = "segments"  # a file: JSONL segments
QRELS = "qrels"  # a file: TREC qrels
RUN = "run"  # a file: a TREC RAG 2024 run
QRELS_FAMILY = "qrels"  # the label family of qrels sources
