"""The session of a batch-mode job's item: record the asks, replay the batches' answers.

An item's `compute(job=, item=, llm=)` runs once per round, unchanged. Each ask is served, in this order:

1. by an answer this item already logged under the ask's key (a round replaying what earlier rounds gave it);
2. by a batch's answer to that exact request (`LLMBatchRequest`), parsed as the live path parses it and logged
   once, as an LLMCall at the batch price; an answer that cannot be used is logged with its reason and its re-ask
   looked up in turn (asked live at once when the organizer chose live re-asks);
3. by the answer cache, as live;
4. else the request is recorded as wanted and `AskDeferred` stops the item's compute for this round: the next
   round's batch carries it.

A chain of re-asks is keyed as live keys it: every call of the chain is logged under the key of its first ask, so
that its usable answer is the answer cache's for that ask.
"""

import json
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from django.db import transaction

from assessor.jobs.llm.cache import cache_key
from assessor.jobs.llm.client import (
    REASK,
    Completion,
    LLMAnswerFailed,
    LLMConfig,
    LLMSession,
    LLMUnavailable,
    Scored,
    _completion_read,
    _Lease,
    request_options,
)
from assessor.jobs.llm.inflight import ask_claim, ask_release, holder_name
from assessor.jobs.llm.parsing import AnswerUnusable
from assessor.models import LLMBatchRequest, LLMCall, PromptTemplate

T = TypeVar("T")

PRICES = ("price_input", "price_output", "price_cached_input")


class AskDeferred(Exception):
    """The ask waits for a batch's answer: the item's compute stops for this round and the item stays pending."""


def batch_priced(config: LLMConfig) -> LLMConfig:
    """The configuration whose prices are the endpoint's batch prices (its prices times its batch factor).

    Through the decimal text of each number, so that a price of six decimals halved is exact.
    """
    from decimal import Decimal

    factor = Decimal(repr(config.batch_price_factor))
    prices: dict[str, Any] = {}
    for name in PRICES:
        value = getattr(config, name, None)
        if value is not None:
            prices[name] = float(Decimal(repr(value)) * factor)
    return replace(config, **prices)


def batch_body(config: LLMConfig, messages: list[dict[str, str]], options: dict) -> dict:
    """The request a batch line carries: the very body the live path posts to /chat/completions."""
    return {"model": config.model, "messages": messages, **options}


@dataclass
class BatchSession(LLMSession):
    """Asks on behalf of one item of a batch-mode job (see the module's docstring)."""

    reasks_live: bool = False
    # False: replay only, record nothing new (an item settled before it goes on live).
    record: bool = True
    _priced: LLMSession | None = field(default=None, init=False)

    def _ask(self, prompt, messages, parse, *, logprobs, cached):
        options = request_options(self.config, prompt)
        if logprobs:
            options = {**options, "logprobs": True}
        key = cache_key(model=self.config.model, prompt=prompt, temperature=options["temperature"], messages=messages)
        first = self._row(key)
        if first is None or first.status not in (LLMBatchRequest.Status.ANSWERED, LLMBatchRequest.Status.USED):
            replayed = self._replayed(key, parse)
            if replayed is not None:
                return replayed
            hit = self._cached(prompt, messages, key, parse) if cached else None
            if hit is not None:
                return hit
        return self._chain(prompt, messages, key, parse, options, first)

    # --- the re-ask chain ---------------------------------------------------------------

    def _chain(
        self,
        prompt: PromptTemplate,
        messages: list[dict[str, str]],
        key: str,
        parse,
        options: dict,
        first: LLMBatchRequest | None,
    ) -> Scored:
        conversation = list(messages)
        raw = ""
        reason = ""
        for number in range(self.config.max_reasks + 1):
            if number == 0:
                row = first
            else:
                request_key = cache_key(
                    model=self.config.model, prompt=prompt, temperature=options["temperature"], messages=conversation
                )
                row = self._row(request_key)
            if row is None:
                if number and self.reasks_live:
                    # A restarted round: the live re-ask may have been answered and logged already.
                    replayed = self._replayed(key, parse)
                    if replayed is not None:
                        return replayed
                    completion = self._live(prompt, conversation, key, options)
                else:
                    self._want(prompt, conversation, key, options, first=number == 0)
                    raise AskDeferred(key)
            elif row.status in (LLMBatchRequest.Status.WANTED, LLMBatchRequest.Status.SENT):
                raise AskDeferred(key)
            elif row.status == LLMBatchRequest.Status.FAILED:
                raise LLMUnavailable(f"the batch did not answer the request: {row.error}")
            else:
                completion = _completion_read(json.dumps(row.response or {}).encode(), latency_ms=0)
            raw = completion.text
            try:
                value = parse(raw)
            except AnswerUnusable as unusable:
                reason = unusable.reason
                if row is not None:
                    self._batch_log(row, prompt, conversation, completion, key=key, error=reason)
                else:
                    self._log(prompt, conversation, completion, key=key, error=reason)
                conversation = conversation + [
                    {"role": "assistant", "content": raw},
                    {"role": "user", "content": REASK.format(reason=reason)},
                ]
                continue
            if row is not None:
                self._batch_log(row, prompt, conversation, completion, key=key, parsed_ok=True)
            else:
                self._log(prompt, conversation, completion, key=key, parsed_ok=True)
            return Scored(value, raw, completion.logprobs, False, key)
        raise LLMAnswerFailed(f"no usable answer after {self.config.max_reasks + 1} asks: {reason}", raw)

    def _live(self, prompt: PromptTemplate, conversation: list[dict[str, str]], key: str, options: dict) -> Completion:
        """A re-ask sent at once (the organizer chose live re-asks), logged at the live price."""
        lease = _Lease(key=key, holder=holder_name(), seconds=self._lease())
        lease.claim()
        try:
            return self._complete(prompt, conversation, key, lease, logprobs=bool(options.get("logprobs")))
        finally:
            ask_release(key, holder=lease.holder)

    # --- the rows -------------------------------------------------------------------------

    def _row(self, request_key: str) -> LLMBatchRequest | None:
        assert self.job_id is not None, "a batch session asks for a job"
        return LLMBatchRequest.objects.filter(job_id=self.job_id, request_key=request_key).first()

    def _replayed(self, key: str, parse) -> Scored | None:
        """This item's usable answer logged under `key` by an earlier round (from a batch, the cache or live)."""
        if self.item_id is None:
            return None
        raw = (
            LLMCall.objects.filter(item_id=self.item_id, cache_key=key, parsed_ok=True)
            .order_by("id")
            .values_list("raw_response", flat=True)
            .first()
        )
        if raw is None:
            return None
        try:
            value = parse(raw)
        except AnswerUnusable:
            return None
        return Scored(value, raw, None, True, key)

    def _want(
        self, prompt: PromptTemplate, conversation: list[dict[str, str]], key: str, options: dict, *, first: bool
    ) -> None:
        if not self.record:
            return
        request_key = (
            key
            if first
            else cache_key(
                model=self.config.model, prompt=prompt, temperature=options["temperature"], messages=conversation
            )
        )
        LLMBatchRequest.objects.bulk_create(
            [
                LLMBatchRequest(
                    job_id=self.job_id or 0,
                    item_id=self.item_id,
                    prompt=prompt,
                    request_key=request_key,
                    chain_key=key,
                    messages=conversation,
                    options=options,
                )
            ],
            ignore_conflicts=True,
        )

    def _batch_log(
        self,
        row: LLMBatchRequest,
        prompt: PromptTemplate,
        conversation: list[dict[str, str]],
        completion: Completion,
        *,
        key: str,
        parsed_ok: bool = False,
        error: str = "",
    ) -> None:
        """Log a batch's answer once, at the batch price, adding it to the job in the same transaction."""
        if row.status != LLMBatchRequest.Status.ANSWERED:
            return  # logged by an earlier round (or by another item asking the same)
        if self._priced is None:
            self._priced = LLMSession(config=batch_priced(self.config), job_id=self.job_id, item_id=self.item_id)
        cost = self._priced.config.cost_picodollars(
            completion.tokens_in, completion.tokens_out, getattr(completion, "tokens_cached", 0)
        )
        with transaction.atomic():
            taken = LLMBatchRequest.objects.filter(pk=row.pk, status=LLMBatchRequest.Status.ANSWERED).update(
                status=LLMBatchRequest.Status.USED,
                tokens_in=completion.tokens_in,
                tokens_out=completion.tokens_out,
                cost_picodollars=cost,
            )
            if not taken:
                return
            self._priced._log(prompt, conversation, completion, key=key, parsed_ok=parsed_ok, error=error)
            self._priced.usage_flush()
        row.status = LLMBatchRequest.Status.USED


def step_lease_claim(job_id: int, *, holder: str, seconds: float) -> bool:
    """One step of a batch job at a time (its rows name the claims, as identical asks' do)."""
    return ask_claim(f"batch-step:{job_id}", holder=holder, lease=seconds)


def step_lease_release(job_id: int, *, holder: str) -> None:
    ask_release(f"batch-step:{job_id}", holder=holder)
