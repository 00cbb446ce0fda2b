"""The named LLM endpoints of a TOML file (LLM_ENDPOINTS), read and checked at start (pure: no Django).

    [endpoints.gpt4o]
    base_url = "https://api.openai.com/v1"
    api_key_env = "OPENAI_API_KEY"   # the NAME of the variable holding the key, never the key
    model = "gpt-4o"
    concurrency = 8
    price_input = 2.5                # US dollars per million tokens
    price_output = 10.0
    price_cached_input = 1.25        # for cached prompt tokens (omitted: the input price)
    batch = true                     # it offers the batch interface (files and batches)
    batch_price_factor = 0.5         # a batch's calls cost this factor of the prices (default 0.5)

A wrong file stops the start with an error naming the file, the endpoint and
the field (or the line, for a file that is not TOML).
"""

import re
import tomllib
from pathlib import Path
from typing import Any

ENDPOINT_NAME = re.compile(r"[a-z0-9][-a-z0-9_]{0,49}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The endpoint the LLM_* variables describe.
DEFAULT_ENDPOINT = "default"

# field: (type, default); every endpoint of the file gets every field.
FIELDS: dict[str, tuple[type, Any]] = {
    "base_url": (str, ""),
    "api_key_env": (str, ""),
    "model": (str, ""),
    "api_version": (str, ""),
    "concurrency": (int, 8),
    "price_input": (float, 0.0),
    "price_output": (float, 0.0),
    # None: the input price (no discount known); TOML has no null, so it is set by leaving it out.
    "price_cached_input": (float, None),
    "temperature": (float, 0.0),
    "timeout": (float, 60.0),
    "batch": (bool, False),
    "batch_price_factor": (float, 0.5),
}
MINIMUM = {
    "concurrency": 1,
    "price_input": 0.0,
    "price_output": 0.0,
    "price_cached_input": 0.0,
    "temperature": 0.0,
    "timeout": 0.1,
    "batch_price_factor": 0.0,
}


TYPE_WORDS = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


class EndpointsFileInvalid(ValueError):
    pass


def _typed(where: str, field: str, value: Any) -> Any:
    kind, _default = FIELDS[field]
    if kind is bool:
        if not isinstance(value, bool):
            raise EndpointsFileInvalid(f"{where}, field {field!r}: {value!r} is not {TYPE_WORDS[kind]}")
        return value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise EndpointsFileInvalid(f"{where}, field {field!r}: {value!r} is not {TYPE_WORDS[kind]}")
    return value


def _field_value(where: str, field: str, raw: Any) -> Any:
    value = _typed(where, field, raw)
    if field in MINIMUM and value < MINIMUM[field]:
        raise EndpointsFileInvalid(f"{where}, field {field!r}: {value!r} is below {MINIMUM[field]}")
    if field == "base_url" and value and not re.match(r"https?://[^/\s]+", value):
        raise EndpointsFileInvalid(f"{where}, field 'base_url': {value!r} is not an http(s) URL")
    if field == "api_key_env" and value and not ENV_NAME.fullmatch(value):
        raise EndpointsFileInvalid(
            f"{where}, field 'api_key_env': {value!r} is not the name of an environment variable (give its name, not the key)"
        )
    return value


def endpoint_fields_check(where: str, raw: dict[str, Any]) -> dict[str, Any]:
    """One endpoint's fields with their defaults; EndpointsFileInvalid names `where` and the field."""
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise EndpointsFileInvalid(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(FIELDS)})")
    fields = {
        field: _field_value(where, field, raw[field]) if field in raw else default
        for field, (_, default) in FIELDS.items()
    }
    if not fields["model"]:
        raise EndpointsFileInvalid(f"{where}, field 'model': required")
    if not fields["base_url"] and not fields["api_key_env"]:
        raise EndpointsFileInvalid(f"{where}, field 'base_url': required (or 'api_key_env' for api.openai.com)")
    return fields


def endpoints_file_read(path: Path) -> dict[str, dict[str, Any]]:
    """{name: fields} of the file's endpoints, in the file's order."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EndpointsFileInvalid(f"{path}: cannot be read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise EndpointsFileInvalid(f"{path}: not TOML: {exc}") from None
    unknown = sorted(set(data) - {"endpoints"})
    if unknown:
        raise EndpointsFileInvalid(f"{path}: unknown table {unknown[0]!r}; endpoints go in [endpoints.NAME]")
    tables = data.get("endpoints", {})
    endpoints = {}
    for name, raw in tables.items():
        where = f"{path}, endpoint {name!r}"
        if not ENDPOINT_NAME.fullmatch(name):
            raise EndpointsFileInvalid(f"{where}: a name is lower-case letters, digits, '-' and '_' (at most 50)")
        if name == DEFAULT_ENDPOINT:
            raise EndpointsFileInvalid(f"{where}: {DEFAULT_ENDPOINT!r} is the endpoint of the LLM_* variables")
        if not isinstance(raw, dict):
            raise EndpointsFileInvalid(f"{where}: not a table ([endpoints.{name}])")
        endpoints[name] = endpoint_fields_check(where, raw)
    return endpoints


# --- the keys an endpoint added on a page may read ----------------------------------------

# An organizer names the variable of an endpoint's key on a page, and the worker sends its value to the
# endpoint's URL: only variables an administrator set aside for LLM keys may be named there, never the
# site's own secrets. The administrator's settings (LLM_* and the LLM_ENDPOINTS file) are not limited.
PAGE_KEY_PREFIX = "LLM_KEY_"
# Never sent anywhere, whatever the settings say: what the site itself runs on.
SITE_SECRETS = frozenset(
    {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "AMQP_URL", "CELERY_BROKER_URL", "BROKER_URL", "ASSESSOR_SECRET_KEY_FILE"}
)


def page_key_refusal(variable: str, *, set_aside: frozenset[str] | set[str] | list[str]) -> str:
    """Why an endpoint added on a page may not read its key from `variable` (empty when it may).

    It may read a variable named LLM_KEY_..., or one the administrator listed in
    LLM_KEY_VARIABLES; no variable is a key (an endpoint without a key).
    """
    if not variable:
        return ""
    allowed = variable.startswith(PAGE_KEY_PREFIX) or variable in set_aside
    if variable in SITE_SECRETS or not allowed:
        return (
            f"The variable {variable} is not set aside for LLM keys: an endpoint added here reads its key from a "
            f"variable named {PAGE_KEY_PREFIX}... or one the administrator lists in LLM_KEY_VARIABLES."
        )
    return ""
