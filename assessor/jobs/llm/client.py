"""The one way the project talks to an LLM: any OpenAI-compatible endpoint.

`LLMSession.ask` sends a prompt, retries transient failures (timeouts, 429,
5xx; honouring Retry-After), re-asks a bounded number of times when the answer
does not parse, logs every call (and every cache hit) as an LLMCall, and adds
its tokens and cost to the job. When all that fails it raises, and the caller
records the item as failed with the raw answer: it never guesses.
`LLMSession.ask_together` does the same for an item's asks that need none of
each other's answers, their first requests sent at once.

The `openai` client's own retries are off: ours log each attempt and share
the concurrency limit (assessor.jobs.llm.concurrency) across processes.
"""

import email.utils
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from contextlib import ExitStack
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from typing import TYPE_CHECKING, Generic, TypeVar

from django.conf import settings
from django.db import router
from django.db.models import F

from assessor.jobs.llm.cache import cache_key, cache_lookup
from assessor.jobs.llm.concurrency import LEASE_MARGIN_SECONDS, llm_slot, shared_backend, slots_wanted_here
from assessor.jobs.llm.inflight import (
    Look,
    ask_claim,
    ask_look_and_claim,
    ask_release,
    ask_release_statement,
    ask_renew,
    asks_look_and_claim,
    holder_name,
    wait_pause,
)
from assessor.jobs.llm.parsing import AnswerUnusable
from assessor.models import Job, LLMCall, PromptTemplate
from assessor.models.jobs import PICODOLLARS
from assessor.models.rows import Write, row_insert_write, rows_insert, writes_joinable, writes_run
from assessor.project.llm_endpoints import DEFAULT_ENDPOINT

if TYPE_CHECKING:
    import openai

T = TypeVar("T")

RETRY_AFTER_CAP_SECONDS = 120.0
BACKOFF_CAP_SECONDS = 30.0
REASK = "Your answer could not be used: {reason}. Answer again, following the instructions exactly."


class LLMNotConfigured(Exception):
    pass


class LLMUnavailable(Exception):
    """The endpoint did not answer usefully after the bounded retries (or refused the request)."""


class LLMAnswerFailed(Exception):
    """Every ask and re-ask was answered with something that could not be parsed."""

    def __init__(self, reason: str, raw: str):
        self.reason = reason
        self.raw = raw
        super().__init__(reason)


def llm_missing_settings() -> list[str]:
    """The environment variables still to set before any LLM job can run."""
    missing = []
    if not settings.LLM_MODEL:
        missing.append("LLM_MODEL")
    if not settings.LLM_BASE_URL and not settings.LLM_API_KEY:
        # OpenAI itself needs only a key; any other server needs its URL.
        missing.append("LLM_BASE_URL (or LLM_API_KEY for api.openai.com)")
    if settings.LLM_API_VERSION and not settings.LLM_BASE_URL:
        missing.append("LLM_BASE_URL (the Azure endpoint, since LLM_API_VERSION is set)")
    return missing


def llm_not_configured_message() -> str:
    missing = llm_missing_settings()
    return (
        "No LLM is configured. Set " + ", ".join(missing) + " in the environment "
        "(and LLM_API_KEY where the server needs one; LLM_API_VERSION for Azure OpenAI), then restart."
    )


@dataclass(frozen=True)
class LLMConfig:
    model: str
    name: str = DEFAULT_ENDPOINT  # the endpoint's name (assessor.jobs.llm.endpoints)
    base_url: str = ""
    api_key: str = ""
    api_version: str = ""
    temperature: float = 0.0
    timeout: float = 60.0
    concurrency: int = 8
    max_retries: int = 5
    max_reasks: int = 2
    price_input: float = 0.0  # US dollars per million tokens
    price_output: float = 0.0
    # For the prompt tokens the provider served from its prompt cache; None: the input price (no discount known).
    price_cached_input: float | None = None
    backoff: float = 0.5  # seconds before the first retry without Retry-After; doubles each time
    batch: bool = False  # the endpoint offers the batch interface (assessor.jobs.batch)
    batch_price_factor: float = 0.5  # a batch's calls cost this factor of the prices

    @classmethod
    def from_settings(cls) -> "LLMConfig":
        if llm_missing_settings():
            raise LLMNotConfigured(llm_not_configured_message())
        return cls(
            model=settings.LLM_MODEL,
            base_url=settings.LLM_BASE_URL,
            api_key=settings.LLM_API_KEY,
            api_version=settings.LLM_API_VERSION,
            temperature=settings.LLM_TEMPERATURE,
            timeout=settings.LLM_TIMEOUT,
            concurrency=settings.LLM_CONCURRENCY,
            max_retries=settings.LLM_MAX_RETRIES,
            max_reasks=settings.LLM_MAX_REASKS,
            price_input=settings.LLM_PRICE_INPUT,
            price_output=settings.LLM_PRICE_OUTPUT,
            price_cached_input=settings.LLM_PRICE_CACHED_INPUT,
            backoff=getattr(settings, "LLM_BACKOFF_SECONDS", 0.5),
            batch=getattr(settings, "LLM_BATCH", False),
            batch_price_factor=getattr(settings, "LLM_BATCH_PRICE_FACTOR", 0.5),
        )

    def cost_picodollars(self, tokens_in: int, tokens_out: int, tokens_cached: int = 0) -> int:
        """A call's cost, exact for prices of up to six decimals per million tokens (rounded beyond).

        `tokens_cached` of the `tokens_in` are priced at the cached input price (the input price when none is set).
        """
        price_input = Decimal(repr(self.price_input))
        price_cached = price_input if self.price_cached_input is None else Decimal(repr(self.price_cached_input))
        per_million = (
            (tokens_in - tokens_cached) * price_input
            + tokens_cached * price_cached
            + tokens_out * Decimal(repr(self.price_output))
        )
        return int((per_million * PICODOLLARS / 1_000_000).to_integral_value(ROUND_HALF_EVEN))

    @property
    def endpoint(self) -> str:
        """What the concurrency limit counts calls of: the endpoint's name, server and model."""
        return f"{self.name} {self.base_url or 'https://api.openai.com/v1'} {self.model}"


_clients: dict[tuple, "openai.OpenAI"] = {}
_clients_lock = threading.Lock()


# The HTTP library under the client logs every request at INFO, which a worker started with `-l INFO` formats and
# writes: CPU per call for a line that says less than the call log.
HTTP_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2")


def _openai_client(config: LLMConfig) -> "openai.OpenAI":
    key = (config.base_url, config.api_key, config.api_version, config.timeout)
    client = _clients.get(key)
    if client is not None:
        return client
    import openai  # the client library is imported by what calls an LLM, not by every command (1 s)

    for name in HTTP_LOGGERS:
        if logging.getLogger(name).level < logging.WARNING:
            logging.getLogger(name).setLevel(logging.WARNING)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            # The library's own HTTP client and defaults, with the hook that takes each call's slot (`_slot_take`).
            http_client = openai.DefaultHttpxClient(event_hooks={"request": [_slot_take]})
            if config.api_version:
                client = openai.AzureOpenAI(
                    azure_endpoint=config.base_url,
                    api_key=config.api_key or "not-needed",
                    api_version=config.api_version,
                    timeout=config.timeout,
                    max_retries=0,
                    http_client=http_client,
                )
            else:
                client = openai.OpenAI(
                    base_url=config.base_url or None,
                    # Local servers (vLLM, Ollama, llama.cpp) accept any key.
                    api_key=config.api_key or "not-needed",
                    timeout=config.timeout,
                    max_retries=0,
                    http_client=http_client,
                )
            _clients[key] = client
        return client


def llm_client_prepare(config: LLMConfig) -> None:
    """Make the endpoint's client now (a worker starting), not on its first call."""
    _openai_client(config)


@dataclass(frozen=True)
class TokenLogprob:
    token: str
    logprob: float


@dataclass
class Completion:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0  # of tokens_in, served from the provider's prompt cache
    latency_ms: int = 0
    # The answer's tokens with their log-probabilities, when they were asked for and the endpoint gave them.
    logprobs: tuple[TokenLogprob, ...] | None = None


@dataclass(frozen=True)
class Scored(Generic[T]):
    """An answer asked with its token log-probabilities (`LLMSession.ask_scored`).

    `logprobs` is None when the endpoint returned none, and for an answer read from the cache (which keeps
    the text only): `from_cache` tells the two apart, `cache_key` names the answer for whoever keeps more.
    """

    value: T
    text: str
    logprobs: tuple[TokenLogprob, ...] | None
    from_cache: bool
    cache_key: str


def retry_after_seconds(headers) -> float | None:
    """The wait a 429/503 asks for: retry-after-ms, or Retry-After in seconds or as an HTTP date."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return min(float(millis) / 1000, RETRY_AFTER_CAP_SECONDS)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return min(max(float(value), 0.0), RETRY_AFTER_CAP_SECONDS)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return min(max(parsed.timestamp() - time.time(), 0.0), RETRY_AFTER_CAP_SECONDS)


def _is_transient(exc: Exception) -> bool:
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


def _backoff_seconds(config: LLMConfig, attempt: int, exc: Exception) -> float:
    response = getattr(exc, "response", None)
    asked = retry_after_seconds(response.headers) if response is not None else None
    if asked is not None:
        return asked
    return min(config.backoff * (2**attempt) * random.uniform(0.5, 1.0), BACKOFF_CAP_SECONDS)


def request_options(config: LLMConfig, prompt: PromptTemplate) -> dict:
    """The sampling parameters of a call: the installation's temperature, unless the prompt names its own."""
    return {"temperature": config.temperature, **(prompt.params or {})}


@dataclass
class _CallSlot:
    """The slot of the call being sent in this thread: taken by `_slot_take` as its request goes on the wire."""

    config: LLMConfig
    calls_after: int
    held: ExitStack = field(default_factory=ExitStack)
    taken_at: float | None = None  # time.monotonic() when the slot was taken


_call_slot: ContextVar[_CallSlot | None] = ContextVar("llm_call_slot", default=None)


def _slot_take(request: object) -> None:
    """The clients' request hook (`_openai_client`): take the call's slot once its request is built, just before
    the request goes on the wire, so that a slot is held for the request alone; building it (the body's JSON, the
    headers, the URL: about as much CPU again as sending it) is done while the thread still waits its turn."""
    call = _call_slot.get()
    if call is None or call.taken_at is not None:  # not a call's request, or the slot is held already (a redirect)
        return
    config = call.config
    call.held.enter_context(
        llm_slot(endpoint=config.endpoint, limit=config.concurrency, timeout=config.timeout, calls_after=call.calls_after)
    )
    call.taken_at = time.monotonic()


def _request(config: LLMConfig, messages: list[dict[str, str]], options: dict, *, calls_after: int = 0) -> Completion:
    client = _openai_client(config)
    body = {"model": config.model, "messages": messages, **options}
    call = _CallSlot(config, calls_after)
    token = _call_slot.set(call)
    try:
        # The slot is taken by the client's request hook and let go of here, once the answer is read.
        with call.held:
            # The client's own POST to the chat completions path: the same request, headers, Azure deployment URL
            # and errors as chat.completions.create, without checking the plain messages against the API's types
            # and building a response model, which cost as much CPU again as the rest of the request.
            raw = client.post("/chat/completions", body=body, cast_to=bytes)
            if call.taken_at is None:
                raise RuntimeError("an LLM request went out without its concurrency slot (a client made elsewhere)")
            # The call's latency is the request's, not the wait for a slot before it.
            latency_ms = int((time.monotonic() - call.taken_at) * 1000)
    finally:
        _call_slot.reset(token)
    return _completion_read(raw, latency_ms=latency_ms)


# The threads that send the first requests of asks made together (`LLMSession.ask_together`) while the asking
# thread waits for them: threads that only send and read (no database), made as they are first needed, at most this
# many (beyond it, a request waits for one of them, as it would for a slot of the endpoint's limit).
TOGETHER_THREADS = 64
_together_pool: ThreadPoolExecutor | None = None
_together_lock = threading.Lock()


def _together_threads() -> ThreadPoolExecutor:
    global _together_pool
    with _together_lock:
        if _together_pool is None:
            _together_pool = ThreadPoolExecutor(max_workers=TOGETHER_THREADS, thread_name_prefix="llm-together")
        return _together_pool


def _together_forgotten() -> None:
    global _together_pool
    _together_pool = None  # a forked child has none of its parent's threads


os.register_at_fork(after_in_child=_together_forgotten)

# A first request's outcome: its completion, or what it raised (handled as the asking thread's own would be).
Sent = Completion | Exception


class _RequestsTogether:
    """Requests sent at once, each on a thread of `_together_threads`, each taking its own slot of the endpoint's
    limit as it goes on the wire. The asking thread takes their outcomes as they come (`answered`), so that what
    was answered is logged while the others are still out (`still_out`)."""

    def __init__(self, config: LLMConfig, requests: Sequence[tuple[list[dict[str, str]], dict]]) -> None:
        self.config = config
        self.requests = requests
        self._out: dict[Future[Sent], int] = {}

    def _sent(self, messages: list[dict[str, str]], options: dict) -> Sent:
        try:
            return _request(self.config, messages, options)
        except Exception as exc:
            return exc

    def answered(self) -> Iterator[tuple[int, Sent]]:
        """Each request's number and outcome, as they come."""
        pool = _together_threads()
        self._out = {pool.submit(self._sent, *request): number for number, request in enumerate(self.requests)}
        for future in as_completed(list(self._out)):
            yield self._out.pop(future), future.result()

    def still_out(self) -> bool:
        """Whether a request not yet taken from `answered` is still waiting for its outcome."""
        return any(not future.done() for future in self._out)


def calls_together_possible() -> bool:
    """Whether an item's independent asks may be sent together (`LLMSession.ask_together`): where the limit's slots
    are kept in Redis. On the database, each sending thread would take and give back its slot over a database
    connection of its own, one more connection a call in flight."""
    return shared_backend() == "redis"


def _completion_read(raw: bytes, *, latency_ms: int) -> Completion:
    """The text and token counts of a chat completion's JSON body."""
    try:
        response = json.loads(raw)
        choices = response.get("choices") or []
        text = (choices[0].get("message") or {}).get("content") or "" if choices else ""
        text = surrogates_replaced(text)
        usage = response.get("usage") or {}
        tokens_in = usage.get("prompt_tokens") or 0
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=usage.get("completion_tokens") or 0,
            # Within the prompt's tokens, so that the uncached part priced at the input price is never negative.
            tokens_cached=max(0, min(cached, tokens_in)),
            latency_ms=latency_ms,
            logprobs=_logprobs_read(choices[0] if choices else {}),
        )
    except (ValueError, AttributeError, IndexError) as exc:
        raise LLMUnavailable(f"the LLM endpoint answered with no chat completion: {raw[:300]!r}") from exc


# A pair never reaches here: JSON's reader joins an escaped pair into one character.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogates_replaced(text: str) -> str:
    """`text` with each lone surrogate (a JSON escape such as "\\ud800" with no pair) as U+FFFD: no database
    stores one, and the rest of the answer is still the model's."""
    return LONE_SURROGATE.sub("\ufffd", text)


def _logprobs_read(choice: dict) -> tuple[TokenLogprob, ...] | None:
    """A choice's `logprobs.content` (the chat completions layout), or None when it has none."""
    content = (choice.get("logprobs") or {}).get("content")
    if not isinstance(content, list) or not content:
        return None
    try:
        return tuple(TokenLogprob(str(entry["token"]), float(entry["logprob"])) for entry in content)
    except (KeyError, TypeError, ValueError):
        return None


@dataclass
class Usage:
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_picodollars: int = 0
    tokens_cached: int = 0

    def add(self, *, tokens_in: int, tokens_out: int, cost_picodollars: int, tokens_cached: int = 0) -> None:
        self.calls += 1
        self.tokens_in += tokens_in
        self.tokens_out += tokens_out
        self.tokens_cached += tokens_cached
        self.cost_picodollars += cost_picodollars

    def job_increments(self) -> dict:
        return {
            "calls": F("calls") + self.calls,
            "tokens_in": F("tokens_in") + self.tokens_in,
            "tokens_out": F("tokens_out") + self.tokens_out,
            "tokens_cached": F("tokens_cached") + self.tokens_cached,
            "cost_picodollars": F("cost_picodollars") + self.cost_picodollars,
        }


@dataclass
class LLMSession:
    """Asks on behalf of one job item; every call is logged against them."""

    config: LLMConfig
    job_id: int | None = None
    item_id: int | None = None
    calls_made: int = field(default=0, init=False)
    usage: "Usage" = field(default_factory=lambda: Usage(), init=False)
    # The calls the item will make after the ask in hand, one after the other (`ask`).
    calls_after: int = field(default=0, init=False)
    # The job engine's sessions (PostgreSQL): the log of an answer (and the release of its ask's claim on the key)
    # is not written on its own but in the session's next statement, the next ask's look at the cache, or handed to
    # the engine for the item's finish (`writes_take`): a round trip less a call. Identical asks waiting on the
    # claim find the answer that much later: the time it takes the item to build its next ask, or its result. A
    # compute that reads the call log (the id of the call an answer came from) runs `writes_flush` first.
    defer_writes: bool = False
    # The item is among its job's last (fewer of its job's items were left to claim after it than the endpoint has
    # calls in flight): its asks go together even while the limit is used up (`ask_together`).
    among_last: bool = False
    _writes: list[tuple[str, Write]] = field(default_factory=list, init=False)  # (the cache key, the write)

    def ask(
        self, prompt: PromptTemplate, messages: list[dict[str, str]], parse: Callable[[str], T], *, calls_after: int = 0
    ) -> T:
        """The parsed answer. `calls_after`: how many more asks the item will make after this one, each waiting on
        the one before; a waiting ask with more after it gets the next free slot of the endpoint first
        (`assessor.jobs.llm.concurrency`), so that a job does not end on one item's run of calls."""
        self.calls_after = calls_after
        return self._ask(prompt, messages, parse, logprobs=False, cached=True).value

    def ask_together(
        self, prompt: PromptTemplate, asks: Sequence[tuple[list[dict[str, str]], Callable[[str], T]]]
    ) -> list[T]:
        """The parsed answers of asks none of which needs another's answer (an item's batches of nuggets), in order.

        Their first requests go out at once (`_RequestsTogether`), each in its turn for a slot of the endpoint's limit,
        so that the item takes one call's time instead of the sum, and a job's last items are not runs of calls one
        after the other while other slots stand idle. Everything else is `ask`'s, ask by ask in this thread as their
        answers come: the cache and its claims, identical asks in flight elsewhere (waited for after the others),
        retries and re-asks, the log (written at once while others are still out). When one of them fails, the others'
        answers are still logged (and cached) before its error is raised. One after the other, as `ask` (the item's
        first ask first for a slot), where `calls_together_possible` says no, when two of the asks are the same, and
        while threads of this process already wait for a slot of the endpoint (`slots_wanted_here`): the limit is used
        up, and asks sent at once would only wait, each in its turn behind the others' first asks, where asked one after
        the other an item's later ask comes before the items that follow (measured: a job of 4,000 calls 0.1 s longer,
        its last calls spread over a whole call's length, when every item's asks went together). Not so for an item
        `among_last` of its job: no item follows it to be served after its later ask, and asked one after the other
        its last ask would start a round of calls after its first, with the job's other calls done.
        """
        options = request_options(self.config, prompt)
        # The keys only once the cheaper tests pass: one after the other, each ask makes its own.
        together = (
            len(asks) > 1
            and calls_together_possible()
            and (self.among_last or not slots_wanted_here(endpoint=self.config.endpoint, limit=self.config.concurrency))
        )
        keys = [
            cache_key(model=self.config.model, prompt=prompt, temperature=options["temperature"], messages=messages)
            for messages, _parse in (asks if together else ())
        ]
        if not together or len(set(keys)) < len(keys):
            return [
                self.ask(prompt, messages, parse, calls_after=len(asks) - number)
                for number, (messages, parse) in enumerate(asks, 1)
            ]
        self.calls_after = 0
        answers: dict[int, Scored[T]] = {}
        claimed: list[_Lease] = []
        try:
            to_send = self._together_looked_up(prompt, asks, keys, answers=answers, claimed=claimed)
            self._together_sent(prompt, asks, to_send, options, answers=answers)
            for number, (messages, parse) in enumerate(asks):
                if number not in answers:  # an identical ask was in flight elsewhere: waited for now
                    answers[number] = self._ask(prompt, messages, parse, logprobs=False, cached=True)
        finally:
            for lease in claimed:
                if not lease.released:
                    ask_release(lease.key, holder=lease.holder)
        return [answers[number].value for number in range(len(asks))]

    def _together_sent(
        self,
        prompt: PromptTemplate,
        asks: Sequence[tuple[list[dict[str, str]], Callable[[str], T]]],
        to_send: list[tuple[int, "_Lease"]],
        options: dict,
        *,
        answers: dict[int, "Scored[T]"],
    ) -> None:
        """`ask_together`'s asks to send, by number with their claims: sent at once, each answer parsed (re-asked,
        retried) and logged as it comes, into `answers` by number. The first failure is raised once every other
        answer is in."""
        sending = _RequestsTogether(self.config, [(asks[number][0], options) for number, _lease in to_send])
        failure: Exception | None = None
        for sent_number, first in sending.answered():
            number, lease = to_send[sent_number]
            messages, parse = asks[number]
            try:
                answers[number] = self._sent(prompt, messages, lease.key, parse, lease, first=first)
            except Exception as exc:
                failure = failure or exc  # the others' answers are logged all the same
            if sending.still_out():
                # Its log written now, while the thread would only wait: a worker killed before the others are
                # answered has paid for this one once (asked again, it comes from the cache).
                self.writes_flush()
        if failure is not None:
            raise failure

    def _together_looked_up(
        self,
        prompt: PromptTemplate,
        asks: Sequence[tuple[list[dict[str, str]], Callable[[str], T]]],
        keys: list[str],
        *,
        answers: dict[int, "Scored[T]"],
        claimed: list["_Lease"],
    ) -> list[tuple[int, "_Lease"]]:
        """`ask_together`'s look at the cache for each ask, and the claim of its key: the asks answered there go into
        `answers` by number, the keys claimed into `claimed`; returns the asks to send, by number, with their claims.
        An ask whose key is claimed elsewhere (an identical ask in flight) is neither."""
        to_send: list[tuple[int, _Lease]] = []
        leases = [_Lease(key=key, holder=holder_name(), seconds=self._lease()) for key in keys]
        looks = self._looks_and_claims(leases)
        # Every key claimed is let go of by the caller, whatever happens to the asks before theirs.
        claimed.extend(lease for lease, look in zip(leases, looks, strict=True) if look.claimed)
        for number, ((messages, parse), lease, look) in enumerate(zip(asks, leases, looks, strict=True)):
            if look.answer is not None:
                hit = self._cached_use(prompt, messages, lease.key, parse, look.answer)
                if hit is not None:
                    answers[number] = hit
                    continue
                look = Look(answer=None, claimed=lease.claim(), recheck=False)
                if look.claimed:
                    claimed.append(lease)
            if not look.claimed:
                continue
            hit = self._cached(prompt, messages, lease.key, parse) if look.recheck else None
            if hit is not None:
                answers[number] = hit
            else:
                to_send.append((number, lease))
        return to_send

    def ask_scored(
        self, prompt: PromptTemplate, messages: list[dict[str, str]], parse: Callable[[str], T], *, cached: bool = True
    ) -> Scored[T]:
        """As `ask`, asking the endpoint for the answer's token log-probabilities too.

        `cached=False` skips the cache (a cached answer has no log-probabilities): the call is made and logged.
        """
        self.calls_after = 0  # not an earlier ask's
        return self._ask(prompt, messages, parse, logprobs=True, cached=cached)

    def _ask(
        self,
        prompt: PromptTemplate,
        messages: list[dict[str, str]],
        parse: Callable[[str], T],
        *,
        logprobs: bool,
        cached: bool,
    ) -> Scored[T]:
        temperature = request_options(self.config, prompt)["temperature"]
        key = cache_key(model=self.config.model, prompt=prompt, temperature=temperature, messages=messages)
        lease = _Lease(key=key, holder=holder_name(), seconds=self._lease())
        waited = 0
        while True:
            # The cache first (a re-run reads its answers and writes nothing but their log), the key claimed where
            # it holds none.
            if cached:
                look = self._look_and_claim(lease)
            else:
                self.writes_flush()
                look = Look(answer=None, claimed=lease.claim(), recheck=False)
            if look.answer is not None:
                hit = self._cached_use(prompt, messages, key, parse, look.answer)
                if hit is not None:
                    return hit
                look = Look(answer=None, claimed=lease.claim(), recheck=False)
            if look.claimed:
                try:
                    # An identical ask may have been answered between the look and the claim.
                    hit = self._cached(prompt, messages, key, parse) if look.recheck else None
                    if hit is not None:
                        return hit
                    return self._sent(prompt, messages, key, parse, lease, logprobs=logprobs)
                finally:
                    if not lease.released:
                        ask_release(key, holder=lease.holder)
            # An identical ask is in flight: wait for its answer, or for it to end without one.
            wait_pause(waited)
            waited += 1

    def _look_and_claim(self, lease: "_Lease") -> Look:
        """The lease's look and claim, with the writes held back until now (`defer_writes`) in the same statement."""
        return self._looks_and_claims([lease])[0]

    def _looks_and_claims(self, leases: list["_Lease"]) -> list[Look]:
        """Each lease's look and claim, with the writes held back until now (`defer_writes`) in the same statement:
        one statement for them all where the database can (PostgreSQL; asks made together), else one after the other.
        The writes go first, on their own, when one of them is of a key looked at (a statement's parts do not see
        each other's writes)."""
        if len(leases) > 1 and not writes_joinable(router.db_for_write(LLMCall)):
            return [self._look_and_claim(lease) for lease in leases]
        if any(key == lease.key for key, _write in self._writes for lease in leases):
            self.writes_flush()
        held, self._writes = self._writes, []
        writes = [write for _key, write in held]
        try:
            if len(leases) == 1:
                return [leases[0].look_and_claim(writes)]
            looks = asks_look_and_claim(
                [lease.key for lease in leases],
                holders=[lease.holder for lease in leases],
                lease=max(lease.seconds for lease in leases),
                writes=writes,
            )
        except BaseException:
            self._writes[:0] = held  # none was written: kept for the next statement
            raise
        renewed = time.monotonic()
        for lease in leases:
            lease.renewed_at = renewed
        return looks

    def writes_take(self) -> list[Write]:
        """The writes held back (`defer_writes`), for the caller to run in a statement of its own (`with_writes`)."""
        writes, self._writes = [write for _key, write in self._writes], []
        return writes

    def writes_flush(self) -> None:
        """Run the writes held back now, in one statement."""
        if self._writes:
            writes_run(self.writes_take(), using=router.db_for_write(LLMCall))

    def _cached(
        self, prompt: PromptTemplate, messages: list[dict[str, str]], key: str, parse: Callable[[str], T]
    ) -> Scored[T] | None:
        """The cached answer, parsed and logged as a cache hit; None when there is none to use."""
        cached = cache_lookup(key)
        return None if cached is None else self._cached_use(prompt, messages, key, parse, cached)

    def _cached_use(
        self, prompt: PromptTemplate, messages: list[dict[str, str]], key: str, parse: Callable[[str], T], cached: str
    ) -> Scored[T] | None:
        """A cached answer, parsed and logged as a cache hit; None when it cannot be used."""
        try:
            value = parse(cached)
        except AnswerUnusable:
            return None  # a parser made stricter since: ask again
        self._log(prompt, messages, Completion(cached), key=key, from_cache=True, parsed_ok=True)
        return Scored(value, cached, None, True, key)

    def _sent(
        self,
        prompt: PromptTemplate,
        messages: list[dict[str, str]],
        key: str,
        parse: Callable[[str], T],
        lease: "_Lease",
        *,
        logprobs: bool = False,
        first: Sent | None = None,
    ) -> Scored[T]:
        """Ask, and re-ask a bounded number of times while the answer cannot be used. `first`: the first request's
        outcome when it was sent already (`ask_together`)."""
        conversation = list(messages)
        raw = ""
        reason = ""
        for _ask in range(self.config.max_reasks + 1):
            completion = self._complete(prompt, conversation, key, lease, logprobs=logprobs, first=first)
            first = None
            raw = completion.text
            try:
                value = parse(raw)
            except AnswerUnusable as unusable:
                reason = unusable.reason
                self._log(prompt, conversation, completion, key=key, error=reason)
                conversation = conversation + [
                    {"role": "assistant", "content": raw},
                    {"role": "user", "content": REASK.format(reason=reason)},
                ]
                continue
            self._log(prompt, conversation, completion, key=key, parsed_ok=True, lease=lease)
            return Scored(value, raw, completion.logprobs, False, key)
        raise LLMAnswerFailed(f"no usable answer after {self.config.max_reasks + 1} asks: {reason}", raw)

    def _lease(self) -> float:
        """How long an identical ask waits on this one's claim without news: one request and its back-off."""
        return self.config.timeout + BACKOFF_CAP_SECONDS + LEASE_MARGIN_SECONDS

    def _complete(
        self,
        prompt: PromptTemplate,
        messages: list[dict[str, str]],
        key: str,
        lease: "_Lease",
        *,
        logprobs: bool = False,
        first: Sent | None = None,
    ) -> Completion:
        """One answer, retrying transient failures; raises LLMUnavailable when they persist. `first`: the outcome of
        the first attempt when it was sent already, handled as if sent here."""
        import openai

        for attempt in range(self.config.max_retries + 1):
            lease.renew_if_old()
            try:
                if first is not None:
                    outcome, first = first, None
                    if isinstance(outcome, Exception):
                        raise outcome
                    return outcome
                options = request_options(self.config, prompt)
                return _request(
                    self.config,
                    messages,
                    {**options, "logprobs": True} if logprobs else options,
                    calls_after=self.calls_after,
                )
            except openai.APIError as exc:
                # A request that reached the endpoint is a call: answered with any status, or timed out waiting for
                # the answer. One that could not be sent at all (no connection) is logged with its error but not
                # counted, so that a job's calls are the requests its endpoint received.
                answered = not isinstance(exc, openai.APIConnectionError) or isinstance(exc, openai.APITimeoutError)
                error = f"{type(exc).__name__}: {exc}"
                self._log(prompt, messages, Completion(""), key=key, error=error, answered=answered)
                if not _is_transient(exc):
                    raise LLMUnavailable(f"the LLM endpoint refused the request: {exc}") from exc
                if attempt == self.config.max_retries:
                    raise LLMUnavailable(
                        f"the LLM endpoint failed {attempt + 1} times; last error: {type(exc).__name__}: {exc}"
                    ) from exc
                time.sleep(_backoff_seconds(self.config, attempt, exc))
        raise AssertionError("unreachable")

    def _log(
        self,
        prompt: PromptTemplate,
        messages: list[dict[str, str]],
        completion: Completion,
        *,
        key: str,
        from_cache: bool = False,
        parsed_ok: bool = False,
        error: str = "",
        answered: bool = True,
        lease: "_Lease | None" = None,
    ) -> None:
        """Log the call; with the `lease` of a usable answer, also let go of the ask's claim, in the same statement
        where the database allows it (PostgreSQL): identical asks waiting on the claim find the answer in the cache
        as soon as the claim is gone, as when the two writes follow each other."""
        cost = (
            0
            if from_cache
            else self.config.cost_picodollars(completion.tokens_in, completion.tokens_out, completion.tokens_cached)
        )
        row = {
            "job_id": self.job_id,
            "item_id": self.item_id,
            "prompt_id": prompt.pk,
            "model": self.config.model,
            "messages": messages,
            "raw_response": completion.text,
            "tokens_in": completion.tokens_in,
            "tokens_out": completion.tokens_out,
            "tokens_cached": completion.tokens_cached,
            "latency_ms": completion.latency_ms,
            "cost_picodollars": cost,
            "cache_key": key,
            "from_cache": from_cache,
            "parsed_ok": parsed_ok,
            "error": error,
            "reached": answered,
        }
        using = router.db_for_write(LLMCall)
        if (lease is not None or (from_cache and self.defer_writes)) and writes_joinable(using):
            # With a usable answer, the claim is let go of in the same statement as its log's row: identical asks
            # waiting on the claim find the answer in the cache as soon as the claim is gone.
            writes = [(key, ask_release_statement(key, holder=lease.holder))] if lease is not None else []
            writes.append((key, row_insert_write(LLMCall, row)))
            if lease is not None:
                lease.released = True
            if self.defer_writes:
                self._writes += writes
            else:
                writes_run([write for _key, write in writes], using=using)
        else:
            rows_insert(LLMCall, [row])
        if from_cache or not answered:
            return
        self.calls_made += 1
        self.usage.add(
            tokens_in=completion.tokens_in,
            tokens_out=completion.tokens_out,
            cost_picodollars=cost,
            tokens_cached=completion.tokens_cached,
        )

    def usage_take(self) -> "Usage":
        """The calls, tokens and cost not yet added to the job; the job engine adds them with the item's result."""
        usage, self.usage = self.usage, Usage()
        return usage

    def usage_flush(self) -> None:
        usage = self.usage_take()
        if self.job_id is not None and usage.calls:
            Job.objects.filter(pk=self.job_id).update(**usage.job_increments())


# Renew an ask's claim before a request only once it is this old: the claim itself set the lease, and a request
# right after it (the common case) needs no second write; a retry after a back-off or a re-ask does.
LEASE_RENEW_AFTER_SECONDS = 5.0


@dataclass
class _Lease:
    """An ask's claim on its cache key (assessor.jobs.llm.inflight), renewed while its requests go on."""

    key: str
    holder: str
    seconds: float
    renewed_at: float = 0.0
    released: bool = False  # let go of with the call log's row (LLMSession._log)

    def claim(self) -> bool:
        claimed = ask_claim(self.key, holder=self.holder, lease=self.seconds)
        self.renewed_at = time.monotonic()
        return claimed

    def look_and_claim(self, writes: list[Write]) -> Look:
        look = ask_look_and_claim(self.key, holder=self.holder, lease=self.seconds, writes=writes)
        self.renewed_at = time.monotonic()
        return look

    def renew_if_old(self) -> None:
        if time.monotonic() - self.renewed_at >= LEASE_RENEW_AFTER_SECONDS:
            ask_renew(self.key, holder=self.holder, lease=self.seconds)
            self.renewed_at = time.monotonic()


def llm_session(
    *, job_id: int | None = None, item_id: int | None = None, config: LLMConfig | None = None
) -> LLMSession:
    return LLMSession(config=config or LLMConfig.from_settings(), job_id=job_id, item_id=item_id)


__all__ = [
    "LLMAnswerFailed",
    "LLMConfig",
    "LLMNotConfigured",
    "LLMSession",
    "LLMUnavailable",
    "Scored",
    "TokenLogprob",
    "llm_client_prepare",
    "llm_missing_settings",
    "llm_not_configured_message",
    "llm_session",
]
