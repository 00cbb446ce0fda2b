import pytest


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
