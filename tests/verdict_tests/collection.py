"""A small collection the example app's tests share: two topics, three runs, six answers whose verdicts are known by
hand."""

from assessor.models import Answer
from tests.builders import make_answer, make_run, make_topic

# (run, topic, answer text, the fake LLM's verdict: "yes" when the answer shares a word of 4+ letters with the query)
ANSWERS = [
    ("r1", "t1", "Lava flows after an eruption.", "yes"),  # lava, eruption
    ("r1", "t2", "Bees make honey.", "yes"),  # bees, honey
    ("r2", "t1", "The weather is mild.", "no"),
    ("r2", "t2", "Flowers bloom in spring.", "yes"),  # flowers
    ("r3", "t1", "Nothing here.", "no"),
    ("r3", "t2", "Cats sleep.", "no"),
]
QUERIES = {"t1": "volcano eruption lava", "t2": "honey bees pollinate flowers"}


def make_verdict_collection() -> dict[tuple[str, str], Answer]:
    topics = {topic_id: make_topic(topic_id, query=query) for topic_id, query in QUERIES.items()}
    runs = {run_id: make_run(run_id) for run_id in ("r1", "r2", "r3")}
    return {
        (run_id, topic_id): make_answer(runs[run_id], topics[topic_id], [(text, [])])
        for run_id, topic_id, text, _ in ANSWERS
    }
