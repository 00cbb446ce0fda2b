"""One person on the site over real HTTP: a kept-alive connection, the session and CSRF cookies,
the login form, and the judging page's label forms read the way its script reads them.

The deployment test and `bench_load` drive gunicorn with it; it speaks only HTTP, so it
works against any server.
"""

import http.client
import json
import socket
import uuid
from dataclasses import dataclass
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urlsplit


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class LabelForm:
    """One label row of a judging page: where its form posts, and the hidden fields it carries."""

    action: str
    fields: dict[str, str]


class _LabelForms(HTMLParser):
    """The `form.jform` label forms of a judging page and the CSRF token on its body."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[LabelForm] = []
        self.csrf = ""
        self._open: LabelForm | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "body" and "hx-headers" in values:
            self.csrf = json.loads(values["hx-headers"]).get("x-csrftoken", "")
        elif tag == "form" and "jform" in values.get("class", "").split():
            self._open = LabelForm(values.get("action", ""), {})
        elif tag == "input" and self._open is not None and values.get("type") == "hidden":
            if values.get("name") != "csrfmiddlewaretoken":
                self._open.fields[values.get("name", "")] = values.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._open is not None:
            self.forms.append(self._open)
            self._open = None


def label_forms(html: str) -> tuple[list[LabelForm], str]:
    """The label forms of a judging page and the CSRF token its script sends."""
    parser = _LabelForms()
    parser.feed(html)
    return parser.forms, parser.csrf


class SiteError(Exception):
    pass


class _Connection:
    """One HTTP/1.1 connection, its messages written and read by hand: the load generator runs on the
    site's own cores, and through `http.client`, which parses each response's headers with the email
    package, a visitor's save cost 0.56 ms of CPU against 0.32 ms through this (its form and JSON included)."""

    def __init__(self, host: str, port: int, timeout: float):
        self.host = host if port == 80 else f"{host}:{port}"
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.unread = b""

    def close(self) -> None:
        self.sock.close()

    def exchange(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes, bool]:
        """Send one request and read its response: status, headers, body, and whether the server closes."""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}", "Accept-Encoding: identity"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        self.sock.sendall("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + (body or b""))
        while True:
            status, received = self._head()
            if status >= 200:  # a 100 Continue or 103 Early Hints comes before the response itself
                break
        length = next((value for name, value in received if name == "content-length"), None)
        chunked = any(name == "transfer-encoding" and "chunked" in value.lower() for name, value in received)
        closes = any(name == "connection" and value.lower() == "close" for name, value in received)
        if method == "HEAD" or status in (204, 304):
            data = b""
        elif chunked:
            data = self._chunks()
        elif length is not None:
            data = self._exactly(int(length))
        else:  # delimited by the end of the connection
            data, closes = self._rest(), True
        return status, received, data, closes

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            # What http.client raises: Visitor.request retries a kept-alive connection closed while idle.
            raise http.client.RemoteDisconnected("the server closed the connection")
        self.unread += data

    def _line_end(self, marker: bytes) -> bytes:
        while (end := self.unread.find(marker)) < 0:
            self._fill()
        taken, self.unread = self.unread[:end], self.unread[end + len(marker) :]
        return taken

    def _head(self) -> tuple[int, list[tuple[str, str]]]:
        status_line, *header_lines = self._line_end(b"\r\n\r\n").decode("latin-1").split("\r\n")
        version, _, rest = status_line.partition(" ")
        if not version.startswith("HTTP/"):
            raise http.client.BadStatusLine(status_line)
        received = []
        for line in header_lines:
            name, _, value = line.partition(":")
            received.append((name.strip().lower(), value.strip()))
        return int(rest[:3]), received

    def _exactly(self, size: int) -> bytes:
        while len(self.unread) < size:
            self._fill()
        taken, self.unread = self.unread[:size], self.unread[size:]
        return taken

    def _chunks(self) -> bytes:
        parts = []
        while size := int(self._line_end(b"\r\n").split(b";")[0], 16):
            parts.append(self._exactly(size))
            self._exactly(2)  # the CRLF after the chunk
        while self._line_end(b"\r\n"):  # trailers, up to the empty line
            pass
        return b"".join(parts)

    def _rest(self) -> bytes:
        try:
            while True:
                self._fill()
        except http.client.RemoteDisconnected:
            pass
        taken, self.unread = self.unread, b""
        return taken


class Visitor:
    """One browser's worth of state: cookies and one connection, reopened when the server closed it."""

    def __init__(self, base_url: str, *, timeout: float = 30.0, keep_alive: bool = True):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.timeout = timeout
        # False: a new connection for each request, as a proxy in front of the site opens them by default.
        self.keep_alive = keep_alive
        self.cookies: dict[str, str] = {}
        self._connection: _Connection | None = None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def request(
        self,
        method: str,
        path: str,
        *,
        fields: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        body: bytes | None = None,
    ) -> Reply:
        """A request with the visitor's cookies: `fields` sent as a urlencoded form, or a `body` as it is."""
        sent = dict(headers or {})
        if fields is not None:
            body = urlencode(fields).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        reused = self._connection is not None
        try:
            return self._send(method, path, body, sent)
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            # A kept-alive connection the server closed while idle: once more on a new one,
            # as browsers do. A fresh connection that fails is the server's failure.
            self.close()
            if not reused:
                raise
            return self._send(method, path, body, sent)

    def _send(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        if self._connection is None:
            self._connection = _Connection(self.host, self.port, self.timeout)
        status, received, data, closes = self._connection.exchange(method, path, body, headers)
        for name, value in received:
            if name == "set-cookie":
                for cookie, morsel in SimpleCookie(value).items():
                    self.cookies[cookie] = morsel.value
        if closes or not self.keep_alive:
            self.close()
        return Reply(status, dict(received), data)

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def form_post(self, path: str, fields: dict[str, str]) -> Reply:
        """A form posted by the browser itself: the CSRF token travels in the form."""
        return self.request("POST", path, fields={**fields, "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")})

    def file_post(self, path: str, fields: dict[str, str], *, file_field: str, file_name: str, content: bytes) -> Reply:
        """A form with a file, posted by the browser itself (multipart/form-data, the CSRF token in the form)."""
        boundary = f"----assessor{uuid.uuid4().hex}"
        parts = [
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in {**fields, "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")}.items()
        ]
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{file_name}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n".encode()
            + content
            + b"\r\n"
        )
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        return self.request(
            "POST", path, body=body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
        )

    def login(self, username: str, password: str) -> None:
        self.get("/login/")  # sets the CSRF cookie
        reply = self.form_post("/login/", {"username": username, "password": password})
        if reply.status != 302 or "sessionid" not in self.cookies:
            raise SiteError(f"login of {username} failed: HTTP {reply.status}")


def label_post(visitor: Visitor, form: LabelForm, *, csrf: str, label: str, op_id: str | None = None) -> Reply:
    """A label saved as the judging page's script saves it (static/js/offline-queue.js): the form's
    hidden fields, the label, an operation id, the CSRF token in a header, asking for JSON."""
    fields = {**form.fields, "label": label, "op_id": op_id or str(uuid.uuid4())}
    return visitor.request(
        "POST", form.action, fields=fields, headers={"X-CSRFToken": csrf, "Accept": "application/json"}
    )


def location_path(reply: Reply) -> str:
    """The path a redirect points to."""
    return urlsplit(reply.headers.get("location", "")).path
