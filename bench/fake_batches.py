"""OpenAI's Files and Batch APIs on the fake LLM server (bench.fake_llm), answered by the chat endpoint's rules.

Every `FakeLLMServer` has one `FakeBatches` as `server.batches`; its knobs and counters (set and read them
directly, `server.reset()` puts them back):

    server.batches.delay: float = 0.0            # seconds from creation to the end state (0: ended at once)
    server.batches.max_requests: int = 50_000    # requests per batch; more: POST /v1/batches answers 400
    server.batches.max_file_bytes: int = 200 * 1024 * 1024  # upload (and batch creation) answers 400 above it
    server.batches.fail: Callable[[str], bool] | None = None  # custom_id -> True: that request fails (500)
    server.batches.fail_every: int = 0           # n > 0: every nth line of a batch (n, 2n, ...) fails (500)
    server.batches.expire_fraction: float | None = None  # batches end `expired`, floor(f * total) answered
    server.batches.transform: Callable[[str, str], str] | None = None  # (custom_id, text) -> the text sent
    server.batches.fail_next(count: int = 1, *, code: str = "token_limit_exceeded", message: str = ...) -> None
        # the next `count` batches created end `failed` at validation, errors.data = [{code, message}]
    # counters
    server.batches.answered: Counter[str]   # custom_id -> times answered with a completion, all batches
    server.batches.failed: Counter[str]     # custom_id -> times answered with an error (500, or 400 unreadable)
    server.batches.calls: int               # requests a batch processed (answered or failed): the batch calls
    server.batches.created: int             # batches created
    server.batches.uploaded: int            # files uploaded
    server.batches.requests: list[dict]     # the bodies a batch processed, in order

A batch takes `delay` and `expire_fraction` as they are when it is created; `fail`, `fail_every` and
`transform` as they are when each request's time comes. Cancelling a batch that has ended answers 400.

Batch calls also count in the server's live counters (`requests`, `count`, `requests_by_model`, `api_keys`,
`request_times`, `/stats`), as every call an endpoint bills does: live calls are `server.count -
server.batches.calls`. Scripted replies (`server.script`) are for live calls only; batches never take them.
`python -m bench.fake_llm` takes --batch-delay, --batch-max-requests, --batch-max-bytes, --batch-fail-every
and --batch-expire-fraction.

The life of a batch is computed from the clock whenever it is read (no thread): with d its delay, it is
`validating` for the first tenth of d, `in_progress` until 0.9 d, answering its requests in order at an even
pace (request i of n at 0.1 d + 0.8 d (i + 1) / n), `finalizing` until d, then `completed` (or `expired`,
or `failed` at 0.1 d if its file does not validate or `fail_next` asked for it). Cancelling answers what is
due, stops, and ends `cancelled` a tenth of d later. A request's answer is the chat endpoint's for the same
body (`model_answer(messages, flip=server.flip)`, then the server's completion and usage, the prompt cache
shared with the live calls), made when its time comes; a prompt the rules cannot read is a 400 line in the
error file, as the chat endpoint answers it. The batch's `usage` sums its answers' (cached tokens included).

Files and objects follow OpenAI's: an output line `{"id": "batch_req_...", "custom_id", "response":
{"status_code": 200, "request_id", "body": <chat.completion>}, "error": null}`; the error file holds the
failed requests' lines (status_code 500 and `body.error`) and, for an expired batch, the unanswered ones as
`{"custom_id", "response": null, "error": {"code": "batch_expired", ...}}` (counted as failed, so that
completed + failed = total at the end). `output_file_id` and `error_file_id` stay null when no line would go
in them. The input file is checked line by line when a batch is made of it (bad JSON, a missing field,
method not POST, a url other than the batch's endpoint, a duplicate custom_id, a model unlike the first
line's); any error fails the batch at validation with `errors.data` naming the 1-based line.
"""

import json
import math
import re
import secrets
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

if TYPE_CHECKING:
    from bench.fake_llm import FakeLLMServer

__all__ = ["FakeBatches", "add_arguments", "configure"]

ENDPOINT = "/v1/chat/completions"
WINDOW_SECONDS = 24 * 3600
FILE_PURPOSES = {"assistants", "batch", "fine-tune", "vision", "user_data", "evals"}
TOKEN_LIMIT_MESSAGE = (
    "Enqueued token limit reached for fake-model in organization org-fake. Please try again once some "
    "in_progress batches have been completed."
)
SERVER_ERROR = "The server had an error while processing your request. Sorry about that!"
EXPIRED_ERROR = {
    "code": "batch_expired",
    "message": "This request could not be executed before the completion window expired.",
}
ROUTE = re.compile(r"/(?P<kind>files|batches)(?:/(?P<id>[^/]+))?(?:/(?P<action>content|cancel))?/?$")

Response = tuple[int, bytes, str]


def _new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


def _error(status: int, message: str, *, code: str | None = None, param: str | None = None) -> Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}
    return status, json.dumps(body).encode(), "application/json"


def _json(payload: dict) -> Response:
    return 200, json.dumps(payload).encode(), "application/json"


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def object(self) -> dict:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


@dataclass
class Line:
    """One request of an input file: its 1-based line number, custom_id and body."""

    number: int
    custom_id: str
    body: dict


def _validate(data: bytes, endpoint: str) -> tuple[list[Line], list[dict]]:
    """The input file's requests, and OpenAI-style errors ({code, message, param, line}) for its bad lines."""
    lines: list[Line] = []
    errors: list[dict] = []
    seen: set[str] = set()
    model: str | None = None

    def bad(number: int, code: str, message: str, param: str | None) -> None:
        errors.append({"code": code, "message": message, "param": param, "line": number})

    for number, raw in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            request = json.loads(raw)
        except ValueError:
            bad(number, "invalid_json_line", "This line is not parseable as valid JSON.", None)
            continue
        if not isinstance(request, dict):
            bad(number, "invalid_json_line", "This line is not a JSON object.", None)
            continue
        missing = [name for name in ("custom_id", "method", "url", "body") if name not in request]
        if missing:
            bad(number, "missing_required_parameter", f"Missing required parameter: '{missing[0]}'.", missing[0])
            continue
        custom_id, body = request["custom_id"], request["body"]
        if not isinstance(custom_id, str) or not isinstance(body, dict):
            name = "custom_id" if not isinstance(custom_id, str) else "body"
            bad(number, "invalid_request", f"The '{name}' of this request has the wrong type.", name)
            continue
        if request["method"] != "POST":
            bad(number, "invalid_method", "The method of this request must be 'POST'.", "method")
            continue
        if request["url"] != endpoint:
            message = f"The URL provided for this request ('{request['url']}') does not match the batch endpoint ('{endpoint}')."
            bad(number, "invalid_url", message, "url")
            continue
        if custom_id in seen:
            message = (
                f"The custom_id '{custom_id}' is a duplicate of another request's; each must be unique in a batch."
            )
            bad(number, "duplicate_custom_id", message, "custom_id")
            continue
        if model is not None and body.get("model") != model:
            message = f"The model '{body.get('model')}' of this request is not the batch's model '{model}'."
            bad(number, "mismatched_model", message, "body.model")
            continue
        seen.add(custom_id)
        model = body.get("model") if model is None else model
        lines.append(Line(number, custom_id, body))
    if not lines and not errors:
        errors.append({"code": "empty_file", "message": "The batch input file is empty.", "param": None, "line": None})
    return lines, errors


@dataclass
class Batch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict | None
    created_at: float
    delay: float
    lines: list[Line]
    errors: list[dict]  # the validation errors, or the whole-batch failure; the batch fails when any
    expire_fraction: float | None
    api_key: str
    serial: int
    results: list[dict] = field(default_factory=list)  # output or error lines, in the order answered
    completed: int = 0
    failed: int = 0
    usage: Counter[str] = field(default_factory=Counter)
    cancelling_at: float | None = None
    ended: str | None = None  # the end status once its files are written
    ended_at: float | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None

    # The schedule, in seconds from creation.
    @property
    def start(self) -> float:
        return self.created_at + 0.1 * self.delay

    @property
    def finalizing(self) -> float:
        return self.created_at + 0.9 * self.delay

    @property
    def end(self) -> float:
        return self.created_at + self.delay

    def due(self, now: float) -> int:
        """How many requests are answered by `now` (before an expiry or a cancel cuts them short)."""
        total = len(self.lines)
        window = self.finalizing - self.start
        if now >= self.finalizing or window <= 0:
            return total
        if now < self.start:
            return 0
        return min(total, math.floor(total * (now - self.start) / window))

    def answerable(self) -> int:
        if self.expire_fraction is None:
            return len(self.lines)
        return min(len(self.lines), math.floor(self.expire_fraction * len(self.lines)))


class FakeBatches:
    """The Files and Batch APIs of one fake server; see the module's docstring for the knobs."""

    def __init__(self, server: "FakeLLMServer"):
        self.server = server
        self._lock = threading.RLock()
        self._set_defaults()

    def _set_defaults(self) -> None:
        self.delay = 0.0
        self.max_requests = 50_000
        self.max_file_bytes = 200 * 1024 * 1024
        self.fail: Callable[[str], bool] | None = None
        self.fail_every = 0
        self.expire_fraction: float | None = None
        self.transform: Callable[[str, str], str] | None = None
        self._fail_next: deque[dict] = deque()
        self.answered: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        self.calls = 0
        self.created = 0
        self.uploaded = 0
        self.requests: list[dict] = []
        self._files: dict[str, StoredFile] = {}
        self._batches: dict[str, Batch] = {}

    def reset(self) -> None:
        """Knobs back to their defaults, counters to zero, files and batches gone."""
        with self._lock:
            self._set_defaults()

    def fail_next(
        self, count: int = 1, *, code: str = "token_limit_exceeded", message: str = TOKEN_LIMIT_MESSAGE
    ) -> None:
        """The next `count` batches created fail at validation with this error (OpenAI's token limit's by default)."""
        with self._lock:
            self._fail_next.extend(
                {"code": code, "message": message, "param": None, "line": None} for _ in range(count)
            )

    # --- HTTP ------------------------------------------------------------------
    def serve(self, handler: BaseHTTPRequestHandler, method: str) -> bool:
        """Answer the request if its path is the Files or the Batch API's; False when it is not."""
        path, _, query = handler.path.partition("?")
        route = ROUTE.search(path)
        if route is None:
            return False
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        api_key = (handler.headers.get("Authorization") or "").removeprefix("Bearer ")
        try:
            status, data, content_type = self._route(
                method,
                route["kind"],
                route["id"],
                route["action"],
                body,
                handler.headers.get("Content-Type") or "",
                parse_qs(query),
                api_key,
            )
        except Exception as exc:  # a bug here should show in the test, not hang the client
            status, data, content_type = _error(500, f"fake batches: {exc!r}", code="server_error")
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        return True

    def _route(
        self,
        method: str,
        kind: str,
        object_id: str | None,
        action: str | None,
        body: bytes,
        content_type: str,
        query: dict[str, list[str]],
        api_key: str,
    ) -> Response:
        if kind == "files":
            if method == "POST" and object_id is None:
                return self.file_upload(body, content_type)
            if method == "GET" and object_id is None:
                return self.file_list(query)
            if method == "GET" and object_id and action is None:
                return self.file_get(object_id)
            if method == "GET" and object_id and action == "content":
                return self.file_content(object_id)
            if method == "DELETE" and object_id and action is None:
                return self.file_delete(object_id)
        else:
            if method == "POST" and object_id is None:
                try:
                    request = json.loads(body or b"{}")
                except ValueError:
                    return _error(400, "We could not parse the JSON body of your request.")
                return self.batch_create(request, api_key)
            if method == "GET" and object_id is None:
                return self.batch_list(query)
            if method == "GET" and object_id and action is None:
                return self.batch_get(object_id)
            if method == "POST" and object_id and action == "cancel":
                return self.batch_cancel(object_id)
        return _error(404, f"Invalid URL ({method} /v1/{kind}{'/' + object_id if object_id else ''})")

    # --- Files ---------------------------------------------------------------
    def file_upload(self, body: bytes, content_type: str) -> Response:
        if not content_type.startswith("multipart/form-data"):
            return _error(400, "The request must be multipart/form-data.")
        message = BytesParser(policy=policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body
        )
        fields: dict[str, str] = {}
        upload: tuple[str, bytes] | None = None
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            payload = payload if isinstance(payload, bytes) else b""
            filename = part.get_filename()
            if filename is not None and name == "file":
                upload = (filename, payload)
            elif name:
                fields[str(name)] = payload.decode()
        purpose = fields.get("purpose")
        if upload is None:
            return _error(400, "Missing required parameter: 'file'.", code="missing_required_parameter", param="file")
        if purpose not in FILE_PURPOSES:
            return _error(400, f"Invalid value for 'purpose': '{purpose}'.", code="invalid_value", param="purpose")
        filename, data = upload
        with self._lock:
            if purpose == "batch" and len(data) > self.max_file_bytes:
                return _error(
                    400,
                    f"File is too large ({len(data)} bytes): a batch input file may hold at most "
                    f"{self.max_file_bytes} bytes. Please split it into smaller files.",
                    code="file_too_large",
                    param="file",
                )
            stored = self._file_store(filename, purpose, data)
            self.uploaded += 1
        return _json(stored.object())

    def _file_store(self, filename: str, purpose: str, data: bytes) -> StoredFile:
        stored = StoredFile(_new_id("file-"), filename, purpose, data, int(time.time()))
        self._files[stored.id] = stored
        return stored

    def _file_missing(self, file_id: str) -> Response:
        return _error(404, f"No such File object: {file_id}", param="id")

    def file_get(self, file_id: str) -> Response:
        with self._lock:
            stored = self._files.get(file_id)
        return _json(stored.object()) if stored else self._file_missing(file_id)

    def file_list(self, query: dict[str, list[str]]) -> Response:
        purpose = query.get("purpose", [None])[0]
        with self._lock:
            files = [f.object() for f in reversed(self._files.values()) if purpose in (None, f.purpose)]
        return _json({"object": "list", "data": files, "first_id": None, "last_id": None, "has_more": False})

    def file_content(self, file_id: str) -> Response:
        with self._lock:
            stored = self._files.get(file_id)
        if stored is None:
            return self._file_missing(file_id)
        return 200, stored.data, "application/octet-stream"

    def file_delete(self, file_id: str) -> Response:
        with self._lock:
            stored = self._files.pop(file_id, None)
        if stored is None:
            return self._file_missing(file_id)
        return _json({"id": file_id, "object": "file", "deleted": True})

    # --- Batches -------------------------------------------------------------
    def batch_create(self, request: dict, api_key: str) -> Response:
        for name in ("input_file_id", "endpoint", "completion_window"):
            if not request.get(name):
                return _error(
                    400, f"Missing required parameter: '{name}'.", code="missing_required_parameter", param=name
                )
        if request["endpoint"] != ENDPOINT:
            return _error(
                400,
                f"Invalid value for 'endpoint': this server batches only '{ENDPOINT}'.",
                code="invalid_value",
                param="endpoint",
            )
        if request["completion_window"] != "24h":
            return _error(
                400,
                "Invalid value for 'completion_window': only '24h' is supported.",
                code="invalid_value",
                param="completion_window",
            )
        metadata = request.get("metadata")
        if metadata is not None and (
            not isinstance(metadata, dict)
            or len(metadata) > 16
            or any(not isinstance(v, str) or len(k) > 64 or len(v) > 512 for k, v in metadata.items())
        ):
            return _error(400, "Invalid 'metadata': at most 16 string pairs.", code="invalid_value", param="metadata")
        with self._lock:
            stored = self._files.get(request["input_file_id"])
            if stored is None:
                return self._file_missing(request["input_file_id"])
            if stored.purpose != "batch":
                return _error(
                    400,
                    f"File {stored.id} was not uploaded with purpose 'batch'.",
                    code="invalid_value",
                    param="input_file_id",
                )
            if len(stored.data) > self.max_file_bytes:
                return _error(
                    400,
                    f"The batch input file is larger than the {self.max_file_bytes} maximum. Please try again with a smaller batch.",
                    code="file_too_large",
                    param="input_file_id",
                )
            lines, errors = _validate(stored.data, ENDPOINT)
            requests = len(lines) + sum(1 for e in errors if e["line"] is not None)
            if requests > self.max_requests:
                return _error(
                    400,
                    f"The batch input file has {requests} requests, more than the {self.max_requests} allowed in one "
                    "batch. Please split it into smaller batches.",
                    code="too_many_requests_in_batch",
                    param="input_file_id",
                )
            if not errors and self._fail_next:
                errors = [self._fail_next.popleft()]
            self.created += 1
            batch = Batch(
                id=_new_id("batch_"),
                input_file_id=stored.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata=metadata,
                created_at=time.time(),
                delay=max(0.0, float(self.delay)),
                lines=lines,
                errors=errors,
                expire_fraction=self.expire_fraction,
                api_key=api_key,
                serial=self.created,
            )
            self._batches[batch.id] = batch
            # Created is validating, even with no delay, as OpenAI answers it.
            return _json(self._batch_object(batch, batch.created_at, created=True))

    def batch_get(self, batch_id: str) -> Response:
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is None:
                return _error(404, f"No batch found with id '{batch_id}'.", param="batch_id")
            return _json(self._batch_object(batch, self._advance(batch)))

    def batch_list(self, query: dict[str, list[str]]) -> Response:
        try:
            limit = int(query.get("limit", ["20"])[0])
        except ValueError:
            return _error(400, "Invalid value for 'limit'.", code="invalid_value", param="limit")
        if not 1 <= limit <= 100:
            return _error(400, "'limit' must be between 1 and 100.", code="invalid_value", param="limit")
        after = query.get("after", [None])[0]
        with self._lock:
            batches = sorted(self._batches.values(), key=lambda b: b.serial, reverse=True)
            if after is not None:
                ids = [b.id for b in batches]
                if after not in ids:
                    return _error(404, f"No batch found with id '{after}'.", param="after")
                batches = batches[ids.index(after) + 1 :]
            page = batches[:limit]
            data = [self._batch_object(b, self._advance(b)) for b in page]
        return _json(
            {
                "object": "list",
                "data": data,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
                "has_more": len(batches) > limit,
            }
        )

    def batch_cancel(self, batch_id: str) -> Response:
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is None:
                return _error(404, f"No batch found with id '{batch_id}'.", param="batch_id")
            now = self._advance(batch)
            status = self._status(batch, now)
            if status not in ("validating", "in_progress", "finalizing"):
                return _error(400, f"Cannot cancel a batch with status '{status}'.", param="batch_id")
            batch.cancelling_at = now
            return _json(self._batch_object(batch, now))

    # --- the clock -------------------------------------------------------------
    def _advance(self, batch: Batch) -> float:
        """Answer the requests due by now, and end the batch if its time has come; returns now."""
        now = time.time()
        if batch.ended is not None:
            return now
        if batch.errors:
            if now >= batch.start:
                self._finish(batch, "failed", batch.start)
            return now
        until = now if batch.cancelling_at is None else batch.cancelling_at
        due = min(batch.due(until), batch.answerable())
        for line in batch.lines[len(batch.results) : due]:
            self._answer(batch, line)
        if batch.cancelling_at is not None:
            if now >= batch.cancelling_at + 0.1 * batch.delay:
                self._finish(batch, "cancelled", batch.cancelling_at + 0.1 * batch.delay)
        elif now >= batch.end:
            if batch.expire_fraction is not None:
                for line in batch.lines[len(batch.results) :]:
                    batch.results.append({"custom_id": line.custom_id, "response": None, "error": dict(EXPIRED_ERROR)})
                    batch.failed += 1
                self._finish(batch, "expired", batch.end)
            else:
                self._finish(batch, "completed", batch.end)
        return now

    def _answer(self, batch: Batch, line: Line) -> None:
        """The chat endpoint's answer to the line's body, or the failure a knob asks for, as a file line."""
        server = self.server
        body = line.body
        with server._lock:
            server.requests.append(body)
            server.api_keys.append(batch.api_key)
            server.request_times.append(time.monotonic())
            server.requests_by_model[str(body.get("model", ""))] += 1
            number = len(server.requests)
        self.calls += 1
        self.requests.append(body)
        position = len(batch.results) + 1  # the requests are answered in order
        request_id = secrets.token_hex(16)
        status, payload = 200, {}
        if (self.fail is not None and self.fail(line.custom_id)) or (
            self.fail_every > 0 and position % self.fail_every == 0
        ):
            status = 500
            payload = {"error": {"message": SERVER_ERROR, "type": "server_error", "param": None, "code": None}}
        else:
            try:
                text = server.answer_text(body.get("messages", []))
            except (ValueError, SyntaxError, IndexError, KeyError) as exc:  # as the chat endpoint answers it
                status = 400
                payload = {
                    "error": {
                        "message": f"unreadable prompt: {exc}",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                }
            else:
                if self.transform is not None:
                    text = self.transform(line.custom_id, text)
                # The prompt cache is the server's, shared with the live calls, as a provider's is.
                payload = server.completion(body, text, number=number)
        if status == 200:
            batch.completed += 1
            self.answered[line.custom_id] += 1
            usage: dict[str, Any] = payload.get("usage") or {}
            batch.usage["input_tokens"] += int(usage.get("prompt_tokens") or 0)
            batch.usage["output_tokens"] += int(usage.get("completion_tokens") or 0)
            cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
            batch.usage["cached_tokens"] += int(cached)
        else:
            batch.failed += 1
            self.failed[line.custom_id] += 1
        batch.results.append(
            {
                "id": _new_id("batch_req_"),
                "custom_id": line.custom_id,
                "response": {"status_code": status, "request_id": request_id, "body": payload},
                "error": None,
            }
        )

    def _finish(self, batch: Batch, status: str, at: float) -> None:
        batch.ended, batch.ended_at = status, at
        if status == "failed":
            return
        ok = [r for r in batch.results if r["response"] is not None and r["response"]["status_code"] == 200]
        bad = [r for r in batch.results if r not in ok]
        if ok:
            batch.output_file_id = self._file_store(f"batch_{batch.id}_output.jsonl", "batch_output", _jsonl(ok)).id
        if bad:
            batch.error_file_id = self._file_store(f"batch_{batch.id}_error.jsonl", "batch_output", _jsonl(bad)).id

    def _status(self, batch: Batch, now: float) -> str:
        if batch.ended is not None:
            return batch.ended
        if batch.cancelling_at is not None:
            return "cancelling"
        if now < batch.start:
            return "validating"
        if now < batch.finalizing:
            return "in_progress"
        return "finalizing"

    def _batch_object(self, batch: Batch, now: float, *, created: bool = False) -> dict:
        status = "validating" if created else self._status(batch, now)
        failed = status == "failed"

        def reached(at: float) -> bool:
            """Whether the batch got to the phase that starts `at` (a cancel or a failure stops it before)."""
            return (
                not created and not failed and now >= at and (batch.cancelling_at is None or batch.cancelling_at >= at)
            )

        def stamp(at: float | None) -> int | None:
            return None if at is None else int(at)

        usage = batch.usage
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "model": next((str(line.body.get("model")) for line in batch.lines), None),
            "errors": {"object": "list", "data": batch.errors} if failed else None,
            "input_file_id": batch.input_file_id,
            "completion_window": batch.completion_window,
            "status": status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": int(batch.created_at),
            "in_progress_at": stamp(batch.start) if reached(batch.start) else None,
            "expires_at": int(batch.created_at) + WINDOW_SECONDS,
            "finalizing_at": stamp(batch.finalizing) if reached(batch.finalizing) else None,
            "completed_at": stamp(batch.ended_at) if status == "completed" else None,
            "failed_at": stamp(batch.ended_at) if failed else None,
            "expired_at": stamp(batch.ended_at) if status == "expired" else None,
            "cancelling_at": stamp(batch.cancelling_at),
            "cancelled_at": stamp(batch.ended_at) if status == "cancelled" else None,
            "request_counts": {
                "total": len(batch.lines) if reached(batch.start) else 0,
                "completed": batch.completed,
                "failed": batch.failed,
            },
            "usage": {
                "input_tokens": usage["input_tokens"],
                "input_tokens_details": {"cached_tokens": usage["cached_tokens"]},
                "output_tokens": usage["output_tokens"],
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": usage["input_tokens"] + usage["output_tokens"],
            },
            "metadata": batch.metadata,
        }


def _jsonl(records: list[dict]) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def add_arguments(parser: Any) -> None:
    """`python -m bench.fake_llm`'s flags for the batch knobs."""
    parser.add_argument("--batch-delay", type=float, default=0.0, help="seconds a batch takes from creation to its end")
    parser.add_argument("--batch-max-requests", type=int, default=50_000, help="requests allowed in one batch")
    parser.add_argument(
        "--batch-max-bytes", type=int, default=200 * 1024 * 1024, help="bytes allowed in a batch input file"
    )
    parser.add_argument("--batch-fail-every", type=int, default=0, help="every nth request of a batch fails with 500")
    parser.add_argument(
        "--batch-expire-fraction", type=float, default=None, help="batches expire with this fraction answered"
    )


def configure(batches: FakeBatches, args: Any) -> None:
    batches.delay = args.batch_delay
    batches.max_requests = args.batch_max_requests
    batches.max_file_bytes = args.batch_max_bytes
    batches.fail_every = args.batch_fail_every
    batches.expire_fraction = args.batch_expire_fraction
