"""Named LLM endpoints: which server, key, model, limit and prices a job's calls use.

Three places name them, in this order: "default" is the LLM_* variables; the
TOML file of LLM_ENDPOINTS adds more (assessor/project/llm_endpoints.py); an
organizer adds more on the pages (LLMEndpoint rows). A name means one
endpoint: a page cannot add a name the settings hold. No key is ever stored
or shown: an endpoint names the environment variable that holds its key, read
by the process that makes the call.
"""

import os
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from assessor.jobs.llm.client import LLMConfig, LLMNotConfigured, llm_missing_settings, llm_not_configured_message
from assessor.models import Job, LLMEndpoint
from assessor.project.llm_endpoints import (
    DEFAULT_ENDPOINT,
    ENDPOINT_NAME,
    EndpointsFileInvalid,
    endpoint_fields_check,
    page_key_refusal,
)

ON_A_PAGE = "a page"

OPEN_STATUSES = (Job.Status.QUEUED, Job.Status.RUNNING)


class EndpointRefused(ValueError):
    pass


@dataclass(frozen=True)
class Endpoint:
    """An endpoint as the pages show it: everything but its key."""

    name: str
    configured_in: str  # "environment (LLM_*)", "the file LLM_ENDPOINTS", "a page"
    model: str
    base_url: str
    api_key_env: str
    concurrency: int
    price_input: float
    price_output: float
    price_cached_input: float | None  # None: the input price
    missing: str  # what is still to set before it can be used; empty when it can
    batch: bool = False  # it offers the batch interface
    batch_price_factor: float = 0.5

    @property
    def usable(self) -> bool:
        return not self.missing


def _default_fields() -> dict[str, Any]:
    # What the pages show of the LLM_* variables; LLMConfig.from_settings makes their calls' configuration.
    return {
        "base_url": settings.LLM_BASE_URL,
        "api_key_env": "LLM_API_KEY",
        "model": settings.LLM_MODEL,
        "api_version": settings.LLM_API_VERSION,
        "concurrency": settings.LLM_CONCURRENCY,
        "price_input": settings.LLM_PRICE_INPUT,
        "price_output": settings.LLM_PRICE_OUTPUT,
        "price_cached_input": settings.LLM_PRICE_CACHED_INPUT,
        "temperature": settings.LLM_TEMPERATURE,
        "timeout": settings.LLM_TIMEOUT,
        "batch": settings.LLM_BATCH,
        "batch_price_factor": settings.LLM_BATCH_PRICE_FACTOR,
    }


def _row_fields(row: LLMEndpoint) -> dict[str, Any]:
    return {field: getattr(row, field) for field in _default_fields()}


def _endpoint_sources() -> dict[str, tuple[str, dict[str, Any]]]:
    """{name: (where it is configured, fields)}: the settings' first, then the organizers'."""
    found: dict[str, tuple[str, dict[str, Any]]] = {DEFAULT_ENDPOINT: ("environment (LLM_*)", _default_fields())}
    for name, fields in settings.LLM_ENDPOINTS.items():
        found[name] = ("the file LLM_ENDPOINTS", fields)
    for row in LLMEndpoint.objects.order_by("name"):
        found.setdefault(row.name, (ON_A_PAGE, _row_fields(row)))
    return found


def _key_refusal(variable: str) -> str:
    return page_key_refusal(variable, set_aside=settings.LLM_KEY_VARIABLES)


def _missing(name: str, fields: dict[str, Any], where: str = "") -> str:
    if name == DEFAULT_ENDPOINT:
        return llm_not_configured_message() if llm_missing_settings() else ""
    variable = fields["api_key_env"]
    # An endpoint added on a page before the rule, naming a site secret, is never used.
    if where == ON_A_PAGE and (refusal := _key_refusal(variable)):
        return f"The LLM endpoint {name!r} cannot be used: {refusal}"
    if variable and not os.environ.get(variable):
        return f"The LLM endpoint {name!r} reads its key from the environment variable {variable}, which is not set."
    return ""


def endpoints_list() -> list[Endpoint]:
    return [
        Endpoint(
            name=name,
            configured_in=where,
            model=fields["model"],
            base_url=fields["base_url"] or "https://api.openai.com/v1",
            api_key_env=fields["api_key_env"],
            concurrency=fields["concurrency"],
            price_input=fields["price_input"],
            price_output=fields["price_output"],
            price_cached_input=fields["price_cached_input"],
            missing=_missing(name, fields, where),
            batch=fields["batch"],
            batch_price_factor=fields["batch_price_factor"],
        )
        for name, (where, fields) in _endpoint_sources().items()
    ]


def _unknown(name: str, sources: dict) -> str:
    return f"No LLM endpoint is named {name!r}; the endpoints are: {', '.join(sources)}."


def endpoint_missing(name: str | None) -> str:
    """Why endpoint `name` (None: "default") cannot be used now; empty when it can."""
    name = name or DEFAULT_ENDPOINT
    sources = _endpoint_sources()
    if name not in sources:
        return _unknown(name, sources)
    where, fields = sources[name]
    return _missing(name, fields, where)


def endpoint_config(name: str | None) -> LLMConfig:
    """The configuration of the calls to endpoint `name` (None: "default"); LLMNotConfigured says what is missing."""
    name = name or DEFAULT_ENDPOINT
    if name == DEFAULT_ENDPOINT:
        # The settings' endpoint: no need to read the organizers' (a worker asks this for every item).
        return LLMConfig.from_settings()
    sources = _endpoint_sources()
    if name not in sources:
        raise LLMNotConfigured(_unknown(name, sources))
    where, fields = sources[name]
    missing = _missing(name, fields, where)
    if missing:
        raise LLMNotConfigured(missing)
    return LLMConfig(
        name=name,
        model=fields["model"],
        base_url=fields["base_url"],
        api_key=os.environ.get(fields["api_key_env"], "") if fields["api_key_env"] else "",
        api_version=fields["api_version"],
        temperature=fields["temperature"],
        timeout=fields["timeout"],
        concurrency=fields["concurrency"],
        max_retries=settings.LLM_MAX_RETRIES,
        max_reasks=settings.LLM_MAX_REASKS,
        price_input=fields["price_input"],
        price_output=fields["price_output"],
        price_cached_input=fields["price_cached_input"],
        backoff=getattr(settings, "LLM_BACKOFF_SECONDS", 0.5),
        batch=fields["batch"],
        batch_price_factor=fields["batch_price_factor"],
    )


def endpoint_add(*, name: str, fields: dict[str, Any], user: User | None = None) -> LLMEndpoint:
    """An organizer's endpoint; EndpointRefused when the name is taken or a field is wrong."""
    if not ENDPOINT_NAME.fullmatch(name):
        raise EndpointRefused(f"The name {name!r} must be lower-case letters, digits, '-' and '_' (at most 50).")
    if name == DEFAULT_ENDPOINT or name in settings.LLM_ENDPOINTS:
        raise EndpointRefused(f"The endpoint {name!r} is configured in the settings: choose another name.")
    try:
        checked = endpoint_fields_check(f"endpoint {name!r}", fields)
    except EndpointsFileInvalid as exc:
        raise EndpointRefused(str(exc)) from None
    if refusal := _key_refusal(checked["api_key_env"]):
        raise EndpointRefused(refusal)
    try:
        with transaction.atomic():
            return LLMEndpoint.objects.create(
                name=name, created_by=user if user is not None and user.is_authenticated else None, **checked
            )
    except IntegrityError:
        raise EndpointRefused(f"An endpoint named {name!r} exists already.") from None


def endpoint_delete(*, name: str) -> None:
    """Remove an organizer's endpoint; refused while a job of it is queued or running."""
    row = LLMEndpoint.objects.filter(name=name).first()
    if row is None:
        raise EndpointRefused(f"No endpoint named {name!r} was added on the pages.")
    running = Job.objects.filter(endpoint_name=name, status__in=OPEN_STATUSES).values_list("pk", flat=True).first()
    if running is not None:
        raise EndpointRefused(
            f"Job {running} of the endpoint {name!r} is still open: cancel it or let it finish first."
        )
    row.delete()
