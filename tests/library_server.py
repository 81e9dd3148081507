"""A local fake of the incident library's API on 127.0.0.1 (port 0), in a thread, for sync tests.

Usage::

    with LibraryServer(listing="paged-url", page_size=2) as library:
        library.put(case)                      # add or change a case: new ETag and Last-Modified
        client = LibraryClient(library.base_url)
        ...
        assert library.statuses("/cases/IL-0427") == [200, 304]

What it serves:

- ``GET /cases/{id}``: the case as JSON with a strong ``ETag`` (hash of the body) and ``Last-Modified``;
  ``304`` for a matching ``If-None-Match``, or (without one) an ``If-Modified-Since`` not older than the
  case. ``raw(id, body)`` serves those bytes instead (a malformed case).
- ``GET /cases/{id}/similar``: ``similar[id]`` as ``{"similar": [...]}``; 404 for an unknown case.
- ``GET /cases[?since=…&page=N&cursor=…]``: the listing in one of the shapes of ``LISTINGS``, cut into
  pages of ``page_size``; ``since`` keeps cases whose ``updated_at`` is not earlier.

Scripting: ``fail(path, status, times)`` answers the next ``times`` requests for ``path`` with ``status``
(0 drops the connection without an answer); ``slow(path, times)`` holds those requests until the server
stops (a client with a short timeout gives up first). Every request is recorded (``requests``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

LISTINGS = (
    "array-whole",  # [case, case, ...] in one answer
    "array-summary",  # [{"id", "updated_at"}, ...] in one answer
    "paged-url",  # {"items": [...], "next": "/cases?page=2"}  (relative URL, null at the end)
    "paged-absolute",  # {"results": [...], "links": {"next": "http://127.0.0.1:…/cases?page=2"}}
    "paged-cursor",  # {"cases": [...], "next_cursor": "c2"}
    "paged-number",  # {"data": [...], "next_page": 2}
    "paged-link-header",  # [...] with Link: <…>; rel="next"
)


@dataclass
class Request:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    status: int


class LibraryServer:
    def __init__(self, listing: str = "array-summary", page_size: int = 100) -> None:
        if listing not in LISTINGS:
            raise ValueError(listing)
        self.listing = listing
        self.page_size = page_size
        self.cases: dict[str, dict[str, Any]] = {}
        self.similar: dict[str, list[Any]] = {}
        self.requests: list[Request] = []
        self._raw: dict[str, bytes] = {}
        self._modified: dict[str, datetime] = {}
        self._failures: dict[str, list[int]] = {}
        self._slow: dict[str, int] = {}
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._clock = datetime(2026, 1, 1, tzinfo=UTC)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    # -- lifecycle ----------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> LibraryServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # -- scripting ----------------------------------------------------------------------------------

    def put(self, case: dict[str, Any]) -> None:
        """Add or change a case; each call is one second later than the previous (Last-Modified)."""
        with self._lock:
            self._clock += timedelta(seconds=1)
            self.cases[case["id"]] = json.loads(json.dumps(case))
            self._modified[case["id"]] = self._clock
            self._raw.pop(case["id"], None)

    def raw(self, case_id: str, body: bytes) -> None:
        """Serve ``body`` for the case instead of its JSON (it stays in the listing)."""
        with self._lock:
            self._clock += timedelta(seconds=1)
            self.cases.setdefault(case_id, {"id": case_id})
            self._modified[case_id] = self._clock
            self._raw[case_id] = body

    def fail(self, path: str, status: int = 500, times: int = 1) -> None:
        with self._lock:
            self._failures.setdefault(path, []).extend([status] * times)

    def slow(self, path: str, times: int = 1) -> None:
        with self._lock:
            self._slow[path] = self._slow.get(path, 0) + times

    def statuses(self, path: str) -> list[int]:
        with self._lock:
            return [r.status for r in self.requests if r.path == path]

    def case_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path.startswith("/cases/")]

    # -- serving ------------------------------------------------------------------------------------

    def body_of(self, case_id: str) -> bytes:
        if case_id in self._raw:
            return self._raw[case_id]
        return json.dumps(self.cases[case_id], ensure_ascii=False).encode("utf-8")

    def _listing(self, query: dict[str, str]) -> tuple[Any, dict[str, str]]:
        ids = list(self.cases)
        since = query.get("since")
        if since:
            cutoff = datetime.fromisoformat(since.replace("Z", "+00:00"))
            if cutoff.tzinfo is None:
                cutoff = cutoff.replace(tzinfo=UTC)
            ids = [i for i in ids if _updated(self.cases[i]) is None or _updated(self.cases[i]) >= cutoff]  # type: ignore[operator]
        whole = self.listing == "array-whole"
        entries = [self.cases[i] if whole else {"id": i, "updated_at": self.cases[i].get("updated_at")} for i in ids]
        if self.listing.startswith("array"):
            return entries, {}
        page = int(query.get("cursor", "c1")[1:] if self.listing == "paged-cursor" else query.get("page", "1"))
        chunk = entries[(page - 1) * self.page_size : page * self.page_size]
        more = page * self.page_size < len(entries)
        nxt = page + 1
        keep = "&" + urlencode({"since": since}) if since else ""
        if self.listing == "paged-url":
            return {"items": chunk, "next": f"/cases?page={nxt}{keep}" if more else None}, {}
        if self.listing == "paged-absolute":
            url = f"{self.base_url}/cases?page={nxt}{keep}" if more else None
            return {"results": chunk, "links": {"next": url}}, {}
        if self.listing == "paged-cursor":
            return {"cases": chunk, "next_cursor": f"c{nxt}" if more else None, "has_more": more}, {}
        if self.listing == "paged-number":
            return {"data": chunk, "next_page": nxt if more else None}, {}
        headers = {"Link": f'<{self.base_url}/cases?page={nxt}{keep}>; rel="next"'} if more else {}
        return chunk, headers

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 1 << 16  # headers and body leave in one write (no Nagle/delayed-ACK stalls)

            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                path = parts.path
                with server._lock:
                    failures = server._failures.get(path)
                    scripted = failures.pop(0) if failures else None
                    slow = server._slow.get(path, 0) > 0
                    if slow:
                        server._slow[path] -= 1
                if slow:
                    self._record(path, query, -1)
                    server._stopping.wait(30)  # released when the server stops; the client gave up long ago
                    self.close_connection = True
                    return
                if scripted is not None:
                    self._record(path, query, scripted)
                    if scripted == 0:
                        self.close_connection = True
                        self.connection.shutdown(2)  # no answer at all: a connection error
                        return
                    self._send(scripted, b'{"error": "scripted failure"}')
                    return
                with server._lock:
                    status, body, headers = self._route(path, query)
                self._record(path, query, status)
                self._send(status, body, headers)

            def _route(self, path: str, query: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
                if path in ("/cases", "/cases/"):
                    listing, headers = server._listing(query)
                    return 200, json.dumps(listing, ensure_ascii=False).encode(), headers
                segments = path.strip("/").split("/")
                if len(segments) == 3 and segments[0] == "cases" and segments[2] == "similar":
                    if segments[1] not in server.cases:
                        return 404, b'{"error": "not found"}', {}
                    return 200, json.dumps({"similar": server.similar.get(segments[1], [])}).encode(), {}
                if len(segments) != 2 or segments[0] != "cases" or segments[1] not in server.cases:
                    return 404, b'{"error": "not found"}', {}
                case_id = segments[1]
                body = server.body_of(case_id)
                etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
                modified = server._modified[case_id]
                headers = {"ETag": etag, "Last-Modified": format_datetime(modified, usegmt=True)}
                if_none = self.headers.get("If-None-Match")
                if_since = self.headers.get("If-Modified-Since")
                if if_none is not None:
                    if etag in [tag.strip() for tag in if_none.split(",")]:
                        return 304, b"", headers
                elif if_since and parsedate_to_datetime(if_since) >= modified:
                    return 304, b"", headers
                return 200, body, headers

            def _record(self, path: str, query: dict[str, str], status: int) -> None:
                with server._lock:
                    server.requests.append(
                        Request(path, query, {k.lower(): v for k, v in self.headers.items()}, status)
                    )

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    if status != 304:
                        self.send_header("Content-Type", "application/json; charset=utf-8")
                        self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if status != 304:
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler


def _updated(case: dict[str, Any]) -> datetime | None:
    value = case.get("updated_at")
    if not isinstance(value, str):
        return None
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def strip_local(case: dict[str, Any]) -> dict[str, Any]:
    """A bundled case as the library would serve it: without the local-only fields."""
    remote: dict[str, Any] = json.loads(json.dumps(case))
    for key in ("failure_class", "signatures", "runbook", "gist", "review_notes"):
        remote.pop(key, None)
    for step in remote.get("remediation", []):
        step.pop("template", None)
    return remote
