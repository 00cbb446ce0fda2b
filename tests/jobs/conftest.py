"""Fixtures of the job and LLM tests."""

import pytest

from tests.llm_server import FakeLLMServer, llm_settings


@pytest.fixture
def llm_server(settings):
    """The local OpenAI-compatible server, with the LLM settings pointing at it."""
    server = FakeLLMServer().start()
    llm_settings(settings, server)
    yield server
    server.stop()
