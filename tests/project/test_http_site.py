"""What the deployment test and bench_load read off the pages: the judging page's label forms, as
its script reads them, and the percentiles bench_load prints."""

import uuid

from django.urls import reverse

from bench.http_site import label_forms
from bench.management.commands.bench_load import TIMING_MARK, percentile, save_times_served
from tests.scenarios import give_assign


def test_the_label_forms_of_a_judging_page_post_as_the_script_posts_them(client, scenario):
    work = give_assign(scenario)
    client.force_login(scenario.assessor)
    page = client.get(reverse("judge:answer", args=[work.pk, 1]))

    forms, csrf = label_forms(page.content.decode())

    assert [form.fields["nugget"] for form in forms] == [str(nugget.pk) for nugget in scenario.nuggets]
    assert {form.action for form in forms} == {reverse("judge:label", args=[work.pk, 1])}
    assert all(set(form.fields) == {"version", "answer", "nugget", "previous"} for form in forms)
    assert forms[0].fields["version"] == str(work.version) and forms[0].fields["previous"] == ""
    assert csrf
    client.handler.enforce_csrf_checks = True
    fields = {**forms[0].fields, "label": "support", "op_id": str(uuid.uuid4())}
    assert client.post(forms[0].action, fields, HTTP_ACCEPT="application/json").status_code == 403
    saved = client.post(forms[0].action, fields, HTTP_X_CSRFTOKEN=csrf, HTTP_ACCEPT="application/json")
    assert saved.status_code == 200 and saved.json()["label"] == "support"


def test_percentiles_are_nearest_rank():
    hundred = [float(value) for value in range(100, 0, -1)]
    assert (percentile(hundred, 0.50), percentile(hundred, 0.95), percentile(hundred, 0.99)) == (50.0, 95.0, 99.0)
    assert percentile([10.0, 20.0, 30.0], 0.50) == 20.0
    assert percentile([10.0, 20.0, 30.0], 0.95) == 30.0
    assert percentile([7.0], 0.99) == 7.0


def test_the_save_times_are_read_from_gunicorns_access_log():
    log = "\n".join(
        [
            "[2026-01-01 00:00:00 +0000] [1] [INFO] Booting worker with pid: 2",
            f"{TIMING_MARK} GET /judge/assign/3/answer/1/ 200 41000",
            f"{TIMING_MARK} POST /judge/assign/3/answer/1/label/ 200 12500",
            f"{TIMING_MARK} POST /login/ 302 300000",
            f"{TIMING_MARK} POST /judge/assign/4/answer/2/label/ 409 8000",
        ]
    )
    assert save_times_served(log) == [12.5, 8.0]


def _connections_served(keep_alive: bool) -> tuple[int, list[int]]:
    """Three requests of one visitor to a local HTTP/1.1 server: how many connections it accepted, and the statuses."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from bench.http_site import Visitor

    class Answer(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keeps connections alive unless the client closes them

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args) -> None:
            pass

    class Counting(ThreadingHTTPServer):
        accepted = 0

        def get_request(self):
            self.accepted += 1
            return super().get_request()

    server = Counting(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        visitor = Visitor(f"http://127.0.0.1:{server.server_address[1]}", keep_alive=keep_alive)
        statuses = [visitor.get("/").status for _ in range(3)]
        visitor.close()
    finally:
        server.shutdown()
        server.server_close()
    return server.accepted, statuses


def test_a_visitor_keeps_its_connection_or_opens_one_for_each_request():
    assert _connections_served(keep_alive=True) == (1, [200, 200, 200])
    # bench_load --connection-per-request: as a proxy in front of the site opens them by default.
    assert _connections_served(keep_alive=False) == (3, [200, 200, 200])


def test_a_visitor_reads_responses_however_the_server_frames_them():
    """Content-Length, chunks (with an extension and a trailer), no body, an end of connection, two cookies,
    and a 103 before the response: each read whole, the next request on the same connection where it stays open."""
    import socket
    import threading

    from bench.http_site import Visitor

    responses = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nSet-Cookie: a=1; Path=/\r\nSet-Cookie: b=2; HttpOnly\r\n\r\nhello",
        b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nchun\r\n3\r\nked\r\n0\r\nX-T: 1\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end",
    ]
    requests: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            for response in responses:
                received = b""
                while b"\r\n\r\n" not in received:
                    received += connection.recv(65536)
                head, _, body = received.partition(b"\r\n\r\n")
                length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length:")), b"0"))  # fmt: skip
                while len(body) < length:
                    body += connection.recv(65536)
                requests.append(head + b"\r\n\r\n" + body)
                connection.sendall(response)

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    visitor = Visitor(f"http://127.0.0.1:{listener.getsockname()[1]}")
    first = visitor.request("POST", "/one/", fields={"label": "support", "nugget": "7"})
    assert (first.status, first.body, visitor.cookies) == (200, b"hello", {"a": "1", "b": "2"})
    second = visitor.get("/two/")
    assert (second.status, second.body, second.headers["transfer-encoding"]) == (200, b"chunked", "chunked")
    assert (visitor.get("/three/").status, visitor.get("/four/").body) == (204, b"to the end")
    assert visitor._connection is None  # closed after the last, as the server said
    server.join(timeout=5)
    listener.close()
    assert requests[0].startswith(b"POST /one/ HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"\r\nCookie: a=1; b=2\r\n" in requests[1] and requests[0].endswith(b"\r\n\r\nlabel=support&nugget=7")
    assert b"Content-Length: 22\r\n" in requests[0] and [r.split(b" ")[1] for r in requests] == [
        b"/one/", b"/two/", b"/three/", b"/four/"
    ]  # fmt: skip
