"""The local OpenAI-compatible server the LLM tests talk to (see bench.fake_llm); tests/jobs/conftest.py offers it as the `llm_server` fixture."""

import json

from bench.fake_llm import FakeLLMServer, Reply

__all__ = ["FakeLLMServer", "Reply", "endpoints_toml", "llm_settings"]


def llm_settings(settings, server: FakeLLMServer, **overrides) -> None:
    """Point the LLM settings at `server`, with short waits so failure tests stay quick."""
    values = {
        "LLM_BASE_URL": server.url,
        "LLM_API_KEY": "",
        "LLM_MODEL": "fake-model",
        "LLM_API_VERSION": "",
        "LLM_TEMPERATURE": 0.0,
        "LLM_TIMEOUT": 5.0,
        "LLM_CONCURRENCY": 4,
        "LLM_MAX_RETRIES": 3,
        "LLM_MAX_REASKS": 2,
        "LLM_PRICE_INPUT": 2.0,
        "LLM_PRICE_OUTPUT": 8.0,
        "LLM_BACKOFF_SECONDS": 0.01,
    }
    values.update(overrides)
    for name, value in values.items():
        setattr(settings, name, value)


def endpoints_toml(endpoints: dict[str, dict]) -> str:
    """An LLM_ENDPOINTS file of these endpoints ({name: {field: value}}), as an organizer writes it."""
    lines = []
    for name, fields in endpoints.items():
        lines.append(f"[endpoints.{name}]")
        # A JSON string or number is written the same way in TOML.
        lines += [f"{field} = {json.dumps(value)}" for field, value in fields.items()]
        lines.append("")
    return "\n".join(lines)


# The fake server's rules, written again here so that tests check its answers against
# an independent copy rather than against the server's own code.
FLIPPED = {"support": "not_support", "not_support": "support", "partial_support": "partial_support"}


def expected_assign(nugget: str, passage: str) -> str:
    """The fake server's assignment rule, recomputed."""
    if nugget.lower() in passage.lower():
        return "support"
    words = lambda text: {w.lower().strip(".,;") for w in text.split() if len(w.strip(".,;")) >= 4}  # noqa: E731
    return "partial_support" if words(nugget) & words(passage) else "not_support"
