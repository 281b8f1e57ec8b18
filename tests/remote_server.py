"""A real REMOTE knowledge endpoint for tests: a stdlib HTTP server on 127.0.0.1.

Use the ``remote_knowledge`` fixture (import it into a conftest)::

    def test_something(remote_knowledge, tenant):
        remote_knowledge.set_items([remote_item("crm-1", "北辰医药三季度营收增长", version="3")])
        version = make_remote_version(tenant, remote_knowledge)
        ...
        assert remote_knowledge.requests[0].json["context"]["user"] == "alice"

The server answers POSTs with ``{"items": <its items, first topK>}`` unless told
otherwise: ``sleep``, ``trickle``, ``fail``, ``redirect``, ``respond_raw``. Every
request (any method, any path) is recorded with its headers and body. Signature
checking here is written independently of knowledge.remote on purpose.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

DEFAULT_SECRET = "remote-test-secret"
RETRIEVE_PATH = "/retrieve"


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes

    @property
    def json(self):
        return json.loads(self.body)

    def signature_is_valid(self, secret: str) -> bool:
        timestamp = self.headers.get("x-sparktide-timestamp", "")
        expected = hmac.new(
            secret.encode(), timestamp.encode() + b"." + self.body, hashlib.sha256
        ).hexdigest()
        return hmac.compare_digest(
            self.headers.get("x-sparktide-signature", ""), f"sha256={expected}"
        )


def remote_item(item_id: str, content: str, *, version: str = "", title: str = "", **extra) -> dict:
    """One item as a remote source returns it; ``extra`` adds page/locator/uri/anything."""
    item = {"id": item_id, "title": title or f"条目 {item_id}", "content": content}
    if version:
        item["version"] = version
    item.update(extra)
    return item


@dataclass
class _Behaviour:
    sleep: float = 0.0
    trickle: tuple[float, float] | None = None  # (interval, total seconds)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    require_secret: str | None = None


class RemoteKnowledgeServer:
    def __init__(self) -> None:
        self.items: list[dict] = []
        self.requests: list[RecordedRequest] = []
        self.behaviour = _Behaviour()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        # A short poll interval keeps stop() (and so every test's teardown) quick.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # --- lifecycle --------------------------------------------------------
    def start(self) -> RemoteKnowledgeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers that sleep or trickle
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.host}{RETRIEVE_PATH}"

    def url_for(self, path: str) -> str:
        return f"http://{self.host}{path}"

    # --- what the source holds -------------------------------------------
    def set_items(self, items: list[dict]) -> None:
        with self._lock:
            self.items = [dict(item) for item in items]

    def change_item(self, item_id: str, **fields) -> None:
        """Change content, version, title… of one item (others untouched)."""
        with self._lock:
            for item in self.items:
                if item["id"] == item_id:
                    item.update(fields)
                    return
        raise KeyError(item_id)

    def drop_item(self, item_id: str) -> None:
        with self._lock:
            self.items = [item for item in self.items if item["id"] != item_id]

    # --- how it misbehaves -----------------------------------------------
    def sleep(self, seconds: float) -> None:
        """Wait before answering at all."""
        self.behaviour.sleep = seconds

    def trickle(self, *, interval: float = 0.05, total: float = 5.0) -> None:
        """Send status and headers at once, then the body one byte per interval."""
        self.behaviour.trickle = (interval, total)

    def fail(self, status: int = 500, body: bytes = b'{"error": "boom"}') -> None:
        self.behaviour.status = status
        self.behaviour.raw = body

    def redirect(self, location: str, status: int = 302) -> None:
        self.behaviour.status = status
        self.behaviour.headers = {"Location": location}
        self.behaviour.raw = b""

    def respond_raw(self, body: bytes | str, status: int = 200) -> None:
        """Answer this exact body (malformed JSON, wrong shapes)."""
        self.behaviour.status = status
        self.behaviour.raw = body.encode() if isinstance(body, str) else body

    def respond_json(self, document, status: int = 200) -> None:
        self.respond_raw(json.dumps(document, ensure_ascii=False), status)

    def require_signature(self, secret: str) -> None:
        """Answer 401 to requests whose signature does not verify with ``secret``."""
        self.behaviour.require_secret = secret

    def reset(self) -> None:
        """Back to answering items normally (items and recorded requests are kept)."""
        self.behaviour = _Behaviour()

    # --- what it saw -------------------------------------------------------
    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [request for request in self.requests if request.path == path]

    # --- the answer ----------------------------------------------------------
    def _answer(self, request: RecordedRequest) -> tuple[int, dict[str, str], bytes]:
        behaviour = self.behaviour
        if behaviour.require_secret and not request.signature_is_valid(behaviour.require_secret):
            return 401, {"Content-Type": "application/json"}, b'{"error": "bad signature"}'
        if behaviour.raw is not None:
            headers = {"Content-Type": "application/json", **behaviour.headers}
            return behaviour.status, headers, behaviour.raw
        try:
            top_k = int(request.json.get("topK", 10))
        except (ValueError, AttributeError, TypeError):
            top_k = 10
        with self._lock:
            items = [dict(item) for item in self.items[: max(top_k, 0)]]
        body = json.dumps({"items": items}, ensure_ascii=False).encode()
        return behaviour.status, {"Content-Type": "application/json", **behaviour.headers}, body


def _handler_for(server: RemoteKnowledgeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            request = RecordedRequest(
                method=self.command,
                path=self.path,
                headers={name.lower(): value for name, value in self.headers.items()},
                body=body,
            )
            server.requests.append(request)
            behaviour = server.behaviour
            if behaviour.sleep and server._stopping.wait(behaviour.sleep):
                return
            status, headers, payload = server._answer(request)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Connection", "close")
            self.end_headers()
            if behaviour.trickle:
                interval, total = behaviour.trickle
                ends = time.monotonic() + total
                for byte in payload:
                    if time.monotonic() > ends or server._stopping.wait(interval):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
            else:
                self.wfile.write(payload)
            self.close_connection = True

        do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = _handle

        def log_message(self, format, *args) -> None:  # noqa: A002 - stdlib signature
            pass

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # A client that gave up (timeout) leaves a broken pipe behind: expected here.
        pass


@pytest.fixture
def remote_knowledge():
    """A running fake REMOTE knowledge endpoint, stopped after the test."""
    server = RemoteKnowledgeServer().start()
    try:
        yield server
    finally:
        server.stop()


def make_remote_version(
    tenant,
    server: RemoteKnowledgeServer,
    *,
    key: str | None = None,
    version: str = "1",
    secret: str = DEFAULT_SECRET,
    timeout_seconds: float = 15.0,
    publish: bool = True,
):
    """A REMOTE knowledge version pointing at ``server`` (PUBLISHED unless told)."""
    from knowledge.models import Knowledge
    from tests import factories

    knowledge_version = factories.make_knowledge(
        tenant,
        key,
        type=Knowledge.Type.REMOTE,
        version=version,
        endpoint=server.url,
        secret=secret,
        timeout_seconds=timeout_seconds,
    )
    return factories.publish(knowledge_version) if publish else knowledge_version
