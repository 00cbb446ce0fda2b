"""The fake LLM server answers a prompt by the rule the app that sends it registered (`registry.FakeAnswer`),
in the test process and run on its own, and a prompt no installed app registers with its fixed sentence."""

import os
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from assessor.registry import FakeAnswer, FakeMatch, registry
from tests import processes
from tests.llm_server import FakeLLMServer

REPO = Path(__file__).resolve().parents[2]
ECHO = "You are EchoJudgeLLM, an assistant that repeats the question."


def ask(url: str, messages: list[dict]) -> str:
    client = openai.OpenAI(base_url=url, api_key="test", max_retries=0, timeout=10)
    completion = client.chat.completions.create(model="fake", messages=messages)
    return completion.choices[0].message.content or ""


@pytest.fixture
def echo_registered(monkeypatch):
    """An app's rule for its prompt, registered beside the installed apps' for one test."""
    answers = [
        *registry.fake_answers,
        FakeAnswer(ECHO, lambda user: user.upper(), flip=lambda answer: answer[::-1]),
        FakeAnswer("Answer in one word.", lambda user: "ended", match=FakeMatch.SYSTEM_END),
        FakeAnswer("Echo this:", lambda user: "started", match=FakeMatch.USER_START),
    ]
    monkeypatch.setattr(registry, "fake_answers", answers)


@pytest.mark.parametrize("flip", [False, True])
def test_a_prompt_an_app_registers_is_answered_by_its_rule(echo_registered, flip):
    server = FakeLLMServer(flip=flip).start()
    try:
        system = {"role": "system", "content": ECHO}
        answer = ask(server.url, [system, {"role": "user", "content": "Why bees?"}])
        # The system message ends in no registered marker: its start is what tells the prompt apart.
        other = ask(server.url, [{"role": "system", "content": "You are X."}, {"role": "user", "content": "hi"}])
        ending = ask(
            server.url, [{"role": "system", "content": "Read. Answer in one word."}, {"role": "user", "content": "x"}]
        )
        alone = ask(server.url, [{"role": "user", "content": "Echo this: bees"}])
        # A user message that starts with the marker is not that prompt when a system message comes first.
        after_system = ask(
            server.url, [{"role": "system", "content": "Hi."}, {"role": "user", "content": "Echo this:"}]
        )
    finally:
        server.stop()
    assert answer == ("?SEEB YHW" if flip else "WHY BEES?")  # the flip the app registered, by hand
    assert (ending, alone) == ("ended", "started")  # no flip registered: the same answer
    assert other == after_system == "I am a test server."


def test_the_example_judge_is_answered_by_the_rule_its_app_registers(llm_server):
    (rule,) = [answer for answer in registry.fake_answers if answer.marker == "You are YesNoJudgeLLM"]
    assert rule.answer.__module__ == "tests.verdicts.parts"
    system = {"role": "system", "content": "You are YesNoJudgeLLM, an assistant that says whether an answer answers."}
    shared = {"role": "user", "content": "Question: why do bees dance\nAnswer: Bees dance to show where food is."}
    unshared = {"role": "user", "content": "Question: why do bees dance\nAnswer: To show the way."}
    # "bees" and "dance" are in both; none of "show", "where", "food" (or "the", "way") is in the question.
    assert [ask(llm_server.url, [system, shared]), ask(llm_server.url, [system, unshared])] == ["yes", "no"]


def test_run_on_its_own_it_sets_django_up_and_answers_the_installed_apps_prompts(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "ASSESSOR_VAR_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "bench.fake_llm", "--flip"]
    with processes.running(command, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True) as server:
        url = server.stdout.readline().strip()
        support = [
            {"role": "system", "content": "You are SupportJudgeLLM, an assistant."},
            {"role": "user", "content": "Sentence: Bees dance.\nPassage: Bees dance. They make honey."},
        ]
        verdict = [
            {"role": "system", "content": "You are YesNoJudgeLLM, an assistant."},
            {"role": "user", "content": "Question: why do bees dance\nAnswer: To show the way."},
        ]
        answers = [ask(url, support), ask(url, verdict)]
    # The sentence is in the passage: FS, turned round by --flip to NS; no word shared: no, flipped to yes.
    assert answers == ["NS", "yes"]


def test_the_server_queues_a_jobs_first_connections_all_opened_at_once():
    """A job's first calls open their connections together (32 threads): the listening socket holds them all until
    they are accepted. With the backlog of 5 that `socketserver` listens with unless told before it listens, the
    kernel drops the rest, and each is sent again a second later (TCP's first retry)."""
    import socket

    server = FakeLLMServer().start()
    try:
        listening = server._server
        assert listening is not None
        # Nobody accepts while the connections are made: the backlog alone must hold them.
        host, port = listening.server_address[:2]
        listening.shutdown()
        opened = []
        try:
            for _ in range(64):
                connection = socket.create_connection((host, port), timeout=0.5)
                opened.append(connection)
        except OSError:
            pass
        finally:
            for connection in opened:
                connection.close()
        assert len(opened) == 64
    finally:
        listening.server_close()
        server._server = None
