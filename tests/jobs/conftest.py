import pytest

from tests.builders import make_answer, make_run, make_segment, make_topic


@pytest.fixture
def slot_asks(monkeypatch) -> list[int]:
    """The `calls_after` each LLM call of the test waited for its slot with, in order (the real slots still held)."""
    from assessor.jobs.llm import client as llm_client

    slot = llm_client.llm_slot
    asked: list[int] = []

    def recorded(**kwargs):
        asked.append(kwargs["calls_after"])
        return slot(**kwargs)

    monkeypatch.setattr(llm_client, "llm_slot", recorded)
    return asked


@pytest.fixture
def cited_answer():
    """An answer of five sentences citing segments: three first citations with a passage (FS, PS and NS by the test
    server's rules), one sentence without a citation, and one citing a segment without text."""
    topic = make_topic("t3", query="zebra stripes pattern")
    full = make_segment("s1#0", text="Zebras have black and white stripes.")
    other = make_segment("s2#0", text="Lions live in prides.")
    blank = make_segment("s3#0", text="")
    answer = make_answer(
        make_run("r1"),
        topic,
        [
            ("Zebras have black and white stripes.", [full, other]),  # FS on the first citation
            ("Zebras have stripes and eat grass.", [full]),  # PS
            ("The sun is hot.", [other]),  # NS
            ("No citation here.", []),  # NS without a call
            ("A passage we lack.", [blank]),  # unjudged without a call
        ],
    )
    return topic, answer
