"""One person on the site over real HTTP: a kept-alive connection, the session and CSRF cookies,
the login form, and the judging page's label forms read the way its script reads them.

The deployment test and `bench_load` drive gunicorn with it; it speaks only HTTP, so it
works against any server.
"""

import http.client
import json
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


class Visitor:
    """One browser's worth of state: cookies and one connection, reopened when the server closed it."""

    def __init__(self, base_url: str, *, timeout: float = 30.0, keep_alive: bool = True):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.timeout = timeout
        # False: a new connection for each request, as a proxy in front of the site opens them by default.
        self.keep_alive = keep_alive
        self.cookies: dict[str, str] = {}
        self._connection: http.client.HTTPConnection | None = None

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
            self._connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        self._connection.request(method, path, body=body, headers=headers)
        response = self._connection.getresponse()
        data = response.read()
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        if response.will_close or not self.keep_alive:
            self.close()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, data)

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
