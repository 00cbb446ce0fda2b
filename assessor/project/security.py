"""What the deployment settings need in code: the secret key file and the client address."""

import os
import secrets
from pathlib import Path

from django.http import HttpRequest


def secret_key_file_read(path: Path) -> str:
    """The key in `path`, made on first use; only its owner may read it."""
    try:
        # O_EXCL: two processes starting at once must not both write a key.
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            # A key written by an older version, readable by others.
            path.chmod(0o600)
    else:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


def owner_only_folder(path: Path) -> Path:
    """A folder only its owner may enter (made if missing): uploads and staged imports hold the site's data."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)  # made by an older version, or under a lenient umask
    return path


def owner_only_file(path: Path) -> Path:
    """A file only its owner may read (made empty if missing), such as the SQLite database: it holds the
    sessions and the password hashes. SQLite gives its -wal and -shm files the database's permissions."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
    return path


def client_address_behind_proxy(request: HttpRequest) -> str | None:
    """The address the proxy saw: the last entry of X-Forwarded-For, which the proxy appended.

    The entries before it come from the client and could be anything.
    """
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    last = forwarded.rsplit(",", 1)[-1].strip()
    return last or request.META.get("REMOTE_ADDR")
