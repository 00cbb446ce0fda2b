"""Typed readers for settings that come from the environment.

Each reader fails at start-up with an error naming the variable, so that a
typo in a deployment never turns into a silently wrong default.
"""

import os
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean: use one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} must be at least {minimum}")
    return value


def env_int_or_off(name: str, default: int) -> int | None:
    """A whole number of at least 0, or None where the variable says `off`."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    if raw.strip().lower() in {"off", "none"}:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is neither a whole number nor off") from None
    if value < 0:
        raise ImproperlyConfigured(f"{name}={raw!r} must be at least 0 (or off)")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name: str, default: str, *, schemes: set[str]) -> str:
    raw = os.environ.get(name, default)
    scheme = urlparse(raw).scheme
    if scheme not in schemes:
        allowed = ", ".join(sorted(schemes))
        raise ImproperlyConfigured(f"{name}={raw!r} has scheme {scheme!r}; expected one of: {allowed}")
    return raw
