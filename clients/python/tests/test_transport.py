"""The client's transport rules against a real local HTTP server that counts what reaches it:
typed errors carry the code, status and problem body; nothing is retried; a malformed citation ID
never leaves the process; a timeout is TIMEOUT. Standard library only (unittest)."""

import asyncio
import json
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sparktide_client import (
    AsyncClient,
    Client,
    ClientErrorCode,
    ConflictError,
    InvalidCitationIdError,
    InvalidResponseError,
    RequestTimeoutError,
    ServerError,
    SparkTideError,
    StreamError,
)
from sparktide_client._core import StreamPolicy

FORGED = "cite_" + "z" * 24
PROBLEM = {
    "type": "urn:sparktide:problem:knowledge-source-unavailable",
    "title": "Service Unavailable",
    "status": 503,
    "code": "KNOWLEDGE_SOURCE_UNAVAILABLE",
    "detail": "The knowledge source cannot be reached.",
}


class Server:
    """Answers every request with (status, content type, body) after ``delay`` seconds."""

    def __init__(self, status=503, body=None, content_type="application/problem+json", delay=0.0):
        self.requests = []
        state = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                state.requests.append((self.command, self.path, self.headers.get("Authorization")))
                if delay:
                    time.sleep(delay)
                payload = body if isinstance(body, bytes) else json.dumps(body or PROBLEM).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass

            do_GET = do_POST = _answer

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Transport(unittest.TestCase):
    def serve(self, **kwargs):
        server = Server(**kwargs)
        self.addCleanup(server.close)
        return server

    def test_a_503_is_one_request_and_a_typed_error_with_the_problem(self):
        server = self.serve()
        with Client(server.url, "desk", "st_x") as client, self.assertRaises(ServerError) as raised:
            client.get_run("run_1")
        error = raised.exception
        self.assertEqual((error.code, error.status), ("KNOWLEDGE_SOURCE_UNAVAILABLE", 503))
        self.assertEqual(error.problem, PROBLEM)
        self.assertEqual(server.requests, [("GET", "/v1/apps/desk/runs/run_1", "Bearer st_x")])

    def test_a_409_is_a_conflict_error_with_its_code(self):
        problem = dict(PROBLEM, status=409, code="RUN_ALREADY_FINISHED")
        server = self.serve(status=409, body=problem)
        with (
            Client(server.url, "desk", "st_x") as client,
            self.assertRaises(ConflictError) as raised,
        ):
            client.cancel("run_1")
        self.assertEqual(
            (raised.exception.code, raised.exception.status), ("RUN_ALREADY_FINISHED", 409)
        )
        self.assertEqual(
            server.requests, [("POST", "/v1/apps/desk/runs/run_1/cancel", "Bearer st_x")]
        )

    def test_an_error_page_that_is_no_problem_document_is_http_error(self):
        server = self.serve(status=502, body=b"<html>bad gateway</html>", content_type="text/html")
        with Client(server.url, "desk", "st_x") as client, self.assertRaises(ServerError) as raised:
            client.answer("run_1")
        self.assertEqual((raised.exception.code, raised.exception.status), ("HTTP_ERROR", 502))
        self.assertIsNone(raised.exception.problem)

    def test_a_success_that_is_not_json_is_invalid_response(self):
        server = self.serve(status=200, body=b"<html>", content_type="text/html")
        with (
            Client(server.url, "desk", "st_x") as client,
            self.assertRaises(InvalidResponseError) as raised,
        ):
            client.get_run("run_1")
        self.assertEqual(raised.exception.code, ClientErrorCode.INVALID_RESPONSE)
        self.assertEqual(str(raised.exception.code), "INVALID_RESPONSE")

    def test_a_malformed_citation_id_never_leaves_the_process(self):
        server = self.serve()
        with Client(server.url, "desk", "st_x") as client:
            for value in (
                "https://example.com/doc",
                f"[{FORGED}](https://x)",
                FORGED[:-1],
                "../admin",
            ):
                with self.assertRaises(InvalidCitationIdError) as raised:
                    client.preview_citation("run_1", value)
                self.assertEqual(
                    (raised.exception.code, raised.exception.status), ("CITATION_NOT_AVAILABLE", 0)
                )
        self.assertEqual(server.requests, [])

    def test_a_timeout_is_timeout_after_one_request(self):
        server = self.serve(delay=2.0)
        client = Client(server.url, "desk", "st_x", timeout=0.3)
        self.addCleanup(client.close)
        with self.assertRaises(RequestTimeoutError) as raised:
            client.preview_citation("run_1", FORGED)
        self.assertEqual((raised.exception.code, raised.exception.status), ("TIMEOUT", 0))
        self.assertIsInstance(raised.exception, TimeoutError)
        self.assertEqual(len(server.requests), 1)

    def test_the_async_client_is_the_same_and_cancellation_abandons_the_call(self):
        server = self.serve(delay=2.0)

        async def scenario():
            async with AsyncClient(server.url, "desk", "st_x") as client:
                task = asyncio.ensure_future(client.preview_citation("run_1", FORGED))
                while not server.requests:
                    await asyncio.sleep(0.01)
                task.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await task
                with self.assertRaises(InvalidCitationIdError):
                    await client.preview_citation("run_1", "https://example.com")

        asyncio.run(scenario())
        self.assertEqual(len(server.requests), 1)

    def test_the_stream_policy_drops_replays_and_gives_up_on_a_refused_origin(self):
        policy = StreamPolicy(after=0, max_reconnects=1)
        frame = {"kind": "event", "seq": 1, "type": "run.started", "at": "t", "data": {}}
        self.assertEqual(policy.on_message(json.dumps(frame))["seq"], 1)
        self.assertIsNone(policy.on_message(json.dumps(frame)))  # a replay after a reconnect
        self.assertEqual(policy.after_close(4408), 0.0)
        with self.assertRaises(StreamError) as raised:
            policy.after_close(4403)
        self.assertEqual(
            (raised.exception.code, raised.exception.status), ("ORIGIN_NOT_ALLOWED", 4403)
        )
        self.assertIsInstance(raised.exception, SparkTideError)


if __name__ == "__main__":
    unittest.main()
