"""A local OpenAI-compatible chat server that answers the project's prompts like a model.

Used by the tests, the benchmarks and `bin/demo --fake-llm`; never by production code. Without a
script it answers every prompt sensibly and deterministically, by the rule the app that sends the
prompt registered (`registry.FakeAnswer`, in each app's `fake_answers.py`: AutoNuggets', AutoAssign's,
support's, UMBRELA's, PrefNugget's preferences, banks and grades, ARGUE-style judgments, Crucible's
extraction; the example judge's in tests/verdicts/parts.py); tests recompute the rules independently.
A prompt no installed app registers is answered "I am a test server.". `script(...)` queues replies that
go first, one per request: fenced or prose-wrapped lists, wrong lengths, unknown labels, slow answers,
429 with Retry-After, 500s, or any literal text.

Run on its own (`python -m bench.fake_llm`), it sets Django up first (`DJANGO_SETTINGS_MODULE`, the
project's settings by default), so that the installed apps register their rules.

A server started with `flip` (`--flip`) is a second "model" that disagrees: it answers by the same
rules, then turns every label round as each rule's `flip` says (support <-> not_support, vital <->
okay, FS <-> NS, grade g -> 3 - g, yes <-> no, preference 1 <-> 2; partial support and the nuggets
themselves stay), so that two endpoints give two conditions that differ in a way a test can compute.
A server started with `logprobs=False` never returns log-probabilities.

Its usage reports the prompt tokens served from a prompt cache (`prompt_tokens_details.cached_tokens`), after
OpenAI's rule: a prompt's tokens are the words `prompt_tokens` counts (its messages' contents split on
whitespace, in order); a prompt that shares its first 1024 tokens or more with the prompt of an earlier answered
request has that shared prefix cached, in whole blocks of 128 tokens counted from the start (1024, 1152, ...;
below 1024, nothing). A server started with `cached_tokens=False` reports no details, as servers that keep no
prompt cache.
"""

import hashlib
import json
import re
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from assessor.jobs.llm.fake_rules import first_words
from assessor.registry import registry
from bench.fake_batches import FakeBatches, add_arguments, configure

__all__ = ["FakeLLMServer", "Reply", "first_words", "model_answer", "token_logprobs"]


def _system_and_user(messages: list[dict]) -> tuple[str, str]:
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    # The first user message holds the prompt; re-asks come after it.
    user = next((m["content"] for m in messages if m["role"] == "user"), "")
    return system, user


def token_logprobs(messages: list[dict], text: str) -> list[dict]:
    """The answer's tokens (whitespace kept with the word after it) and their log-probabilities."""
    system, user = _system_and_user(messages)
    rule = registry.fake_answer(system, user)
    span, logprob = (0, 0), 0.0
    if rule is not None and rule.logprob_span is not None:
        span, logprob = rule.logprob_span(user, text)
    tokens, start = [], 0
    for token in re.findall(r"\s*\S+|\s+", text):
        inside = start < span[1] and start + len(token) > span[0] and token.strip()
        tokens.append({"token": token, "logprob": logprob if inside else 0.0, "bytes": None, "top_logprobs": []})
        start += len(token)
    return tokens


def model_answer(messages: list[dict], *, flip: bool = False) -> str:
    system, user = _system_and_user(messages)
    rule = registry.fake_answer(system, user)
    if rule is None:
        return "I am a test server."
    answer = rule.answer(user)
    if flip and rule.flip is not None:
        return rule.flip(answer)
    return answer


@dataclass
class Reply:
    """A scripted reply: a status, a delay, and the text (or a change of the model's text)."""

    status: int = 200
    text: str | None = None
    transform: Callable[[str], str] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    @classmethod
    def literal(cls, text: str) -> "Reply":
        return cls(text=text)

    @classmethod
    def fenced(cls) -> "Reply":
        return cls(transform=lambda answer: f"```python\n{answer}\n```")

    @classmethod
    def prose(cls) -> "Reply":
        return cls(transform=lambda answer: f"Sure! Here is the list you asked for:\n{answer}\nI hope this helps.")

    @classmethod
    def short(cls) -> "Reply":
        return cls(transform=lambda answer: json.dumps(json.loads(answer)[:-1]))

    @classmethod
    def long(cls) -> "Reply":
        return cls(transform=lambda answer: json.dumps(json.loads(answer) + json.loads(answer)[-1:]))

    @classmethod
    def unknown_label(cls, label: str = "maybe") -> "Reply":
        return cls(transform=lambda answer: json.dumps([label] + json.loads(answer)[1:]))

    @classmethod
    def slow(cls, seconds: float) -> "Reply":
        return cls(delay=seconds)

    @classmethod
    def error(cls, status: int, *, retry_after: str | None = None, retry_after_ms: str | None = None) -> "Reply":
        headers = {}
        if retry_after is not None:
            headers["Retry-After"] = retry_after
        if retry_after_ms is not None:
            headers["retry-after-ms"] = retry_after_ms
        return cls(status=status, headers=headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Read as the socket starts listening, in the constructor: the default of 5 drops the connections of a job's
    # first calls, all opened at once, and the client sends them again a second later (TCP's first retry).
    request_queue_size = 256


# How many of a model's first requests' arrival times are kept (`stats`): a benchmark's limit of calls at once.
FIRST_REQUESTS_KEPT = 64


class FakeLLMServer:
    def __init__(self, *, latency: float = 0.0, flip: bool = False, logprobs: bool = True, cached_tokens: bool = True):
        self.latency = latency
        self.flip = flip
        self.logprobs = logprobs  # False: an endpoint that never returns log-probabilities
        self.cached_tokens = cached_tokens  # False: an endpoint that reports no prompt cache
        # The digests of the answered prompts' prefixes at each cache boundary (`_prompt_prefixes`).
        self._prompt_cache: set[bytes] = set()
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.requests: list[dict] = []
        # The key each request came with (its Authorization: Bearer ...), in order.
        self.api_keys: list[str] = []
        self.request_times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        # Per model named in the requests, so that two clients sharing the server (a benchmark's app and its
        # reference) are counted apart: requests received, and the most in flight at once.
        self.requests_by_model: Counter[str] = Counter()
        self.in_flight_by_model: Counter[str] = Counter()
        self.max_in_flight_by_model: Counter[str] = Counter()
        # Per model, when its first FIRST_REQUESTS_KEPT requests arrived and its last answer was sent (time.monotonic(),
        # the machine's clock, which a benchmark's processes share): a run's wall parted into its start, its calls and
        # its end, and how far apart its first calls went out.
        self.first_requests_by_model: defaultdict[str, list[float]] = defaultdict(list)
        self.last_done_by_model: dict[str, float] = {}
        # When it last had as many requests in flight as it ever had: the end of its calls after that is its tail,
        # where the limit is not used up (the last calls of the last items).
        self.last_full_by_model: dict[str, float] = {}
        # Per model, its requests' time in flight added up (seconds): against the most in flight over its calls, what
        # its calls left of the limit unused, between one call and the next as well as at the start and the end.
        self.busy_seconds_by_model: defaultdict[str, float] = defaultdict(float)
        self._changed_by_model: dict[str, float] = {}
        self._server: _Server | None = None
        # OpenAI's Files and Batch APIs, answered by the same rules; its knobs and counters (bench.fake_batches).
        self.batches = FakeBatches(self)

    # --- control -----------------------------------------------------------
    def start(self, port: int = 0) -> "FakeLLMServer":
        server = _Server(("127.0.0.1", port), _handler_for(self))
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def count(self) -> int:
        return len(self.requests)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.api_keys.clear()
            self.request_times.clear()
            self.max_in_flight = 0
            self.requests_by_model.clear()
            self.max_in_flight_by_model.clear()
            self.first_requests_by_model.clear()
            self.last_done_by_model.clear()
            self.last_full_by_model.clear()
            self.busy_seconds_by_model.clear()
            self._changed_by_model.clear()
            self._prompt_cache.clear()
        self.batches.reset()

    # --- serving -------------------------------------------------------------
    def _next_reply(self, body: dict, api_key: str) -> Reply:
        model = str(body.get("model", ""))
        with self._lock:
            self.requests.append(body)
            self.api_keys.append(api_key)
            now = time.monotonic()
            self.request_times.append(now)
            if len(firsts := self.first_requests_by_model[model]) < FIRST_REQUESTS_KEPT:
                firsts.append(now)
            self._busy_add(model, now)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.requests_by_model[model] += 1
            self.in_flight_by_model[model] += 1
            self.max_in_flight_by_model[model] = max(self.max_in_flight_by_model[model], self.in_flight_by_model[model])
            return self._script.popleft() if self._script else Reply()

    def _done(self, body: dict) -> None:
        with self._lock:
            model = str(body.get("model", ""))
            now = time.monotonic()
            if self.in_flight_by_model[model] == self.max_in_flight_by_model[model]:
                self.last_full_by_model[model] = now
            self._busy_add(model, now)
            self.in_flight -= 1
            self.in_flight_by_model[model] -= 1
            self.last_done_by_model[model] = now

    def _busy_add(self, model: str, now: float) -> None:
        """Add the model's time in flight since its last request came or went (the lock held, before the change)."""
        self.busy_seconds_by_model[model] += self.in_flight_by_model[model] * (now - self._changed_by_model.get(model, now))
        self._changed_by_model[model] = now

    def answer_text(self, messages: list[dict]) -> str:
        """This server's answer to a prompt (by the rules, flipped if it flips): a batch answers as the chat does."""
        return model_answer(messages, flip=self.flip)

    def completion(self, body: dict, text: str, *, number: int) -> dict:
        """The chat completion this server sends for `text`, as the chat endpoint builds it (bench.fake_batches)."""
        cached = self.prompt_cached(body.get("messages", [])) if self.cached_tokens else None
        return _completion(body, text, number=number, logprobs=self.logprobs, cached=cached)

    def prompt_cached(self, messages: list[dict]) -> int:
        """The prompt's tokens served from the prompt cache (module docstring); its own prefixes are cached after."""
        keys = _prompt_prefixes(messages)
        with self._lock:
            shared = 0
            for key in keys:  # a prefix is cached only if every shorter one is
                if key not in self._prompt_cache:
                    break
                shared += 1
            self._prompt_cache.update(keys)
        return PROMPT_CACHE_MIN + (shared - 1) * PROMPT_CACHE_BLOCK if shared else 0

    def stats(self) -> dict:
        """What `GET /stats` answers: the requests received and the most in flight, in all and per model."""
        with self._lock:
            return {
                "requests": len(self.requests),
                "max_in_flight": self.max_in_flight,
                "requests_by_model": dict(self.requests_by_model),
                "max_in_flight_by_model": dict(self.max_in_flight_by_model),
                "first_request_by_model": {model: times[0] for model, times in self.first_requests_by_model.items()},
                "first_requests_by_model": {model: list(times) for model, times in self.first_requests_by_model.items()},
                "last_done_by_model": dict(self.last_done_by_model),
                "last_full_by_model": dict(self.last_full_by_model),
                "busy_seconds_by_model": dict(self.busy_seconds_by_model),
            }


# The prompt cache's first block, and the size of each further one, in tokens (OpenAI's).
PROMPT_CACHE_MIN = 1024
PROMPT_CACHE_BLOCK = 128


def _prompt_prefixes(messages: list[dict]) -> list[bytes]:
    """A digest of each prefix of the prompt's words ending at a cache boundary (1024, 1152, ...), shortest first."""
    words = [word for message in messages for word in str(message.get("content", "")).split()]
    digest = hashlib.blake2b(digest_size=16)
    prefixes = []
    for end in range(PROMPT_CACHE_BLOCK, len(words) + 1, PROMPT_CACHE_BLOCK):
        digest.update("\x00".join(words[end - PROMPT_CACHE_BLOCK : end]).encode() + b"\x00")
        if end >= PROMPT_CACHE_MIN:
            prefixes.append(digest.digest())
    return prefixes


def _completion(body: dict, text: str, *, number: int, logprobs: bool, cached: int | None = None) -> dict:
    """The chat completion that answers the request `body` with `text`, its usage counted in words (`cached` of
    the prompt's from the prompt cache, None: not reported); its tokens' log-probabilities when the request asks
    for them and the server gives them (`logprobs`)."""
    messages = body.get("messages", [])
    prompt_words = sum(len(str(m.get("content", "")).split()) for m in messages)
    scored = {"logprobs": {"content": token_logprobs(messages, text)}} if body.get("logprobs") and logprobs else {}
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
                **scored,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_words,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt_words + len(text.split()),
            **({} if cached is None else {"prompt_tokens_details": {"cached_tokens": cached}}),
        },
    }


def _handler_for(fake: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # One write per response, sent at once: small split writes meet delayed ACKs (40 ms each).
        wbufsize = 1 << 16
        disable_nagle_algorithm = True

        def log_message(self, *args) -> None:  # keep test output clean
            pass

        def _send(self, status: int, payload: dict, headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if fake.batches.serve(self, "GET"):
                return
            if self.path.split("?", 1)[0].rstrip("/").endswith("/stats"):
                self._send(200, fake.stats(), {})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}}, {})

        def do_DELETE(self) -> None:
            if not fake.batches.serve(self, "DELETE"):
                self._send(404, {"error": {"message": f"no route {self.path}"}}, {})

        def do_POST(self) -> None:
            if fake.batches.serve(self, "POST"):
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.split("?", 1)[0].endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                return
            api_key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            reply = fake._next_reply(body, api_key)
            try:
                time.sleep(fake.latency + reply.delay)
                if reply.status != 200:
                    error = {"error": {"message": f"scripted status {reply.status}", "type": "test", "code": None}}
                    self._send(reply.status, error, reply.headers)
                    return
                messages = body.get("messages", [])
                try:
                    text = reply.text if reply.text is not None else model_answer(messages, flip=fake.flip)
                except (ValueError, SyntaxError, IndexError, KeyError) as exc:  # a prompt its rules cannot read
                    error = {"error": {"message": f"unreadable prompt: {exc}", "type": "invalid_request_error"}}
                    self._send(400, error, reply.headers)
                    return
                if reply.transform is not None:
                    text = reply.transform(text)
                cached = fake.prompt_cached(messages) if fake.cached_tokens else None
                payload = _completion(body, text, number=fake.count, logprobs=fake.logprobs, cached=cached)
                self._send(200, payload, reply.headers)
            finally:
                fake._done(body)

    return Handler


def _django_setup() -> None:
    """The installed apps register the rules that answer their prompts while Django starts."""
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assessor.project.settings")
    django.setup()


def main() -> None:
    """Serve until killed, printing the base URL first (for benchmarks in another process)."""
    import argparse
    import signal
    import sys

    parser = argparse.ArgumentParser(description="A local OpenAI-compatible test server.")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (default: any free one)")
    parser.add_argument("--flip", action="store_true", help="turn every label round: a second model that disagrees")
    add_arguments(parser)
    args = parser.parse_args()
    _django_setup()
    server = FakeLLMServer(latency=args.latency, flip=args.flip).start(port=args.port)
    configure(server.batches, args)
    print(server.url, flush=True)

    def stop(*_args) -> None:
        # The caller reads this to check the concurrency limit held.
        print(f"requests {server.count} max_in_flight {server.max_in_flight}", flush=True)
        server.stop()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stop()


if __name__ == "__main__":
    main()
