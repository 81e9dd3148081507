"""A small local fake of Slack's Web API over loopback, for tests of anything that talks to Slack.

Usage::

    with FakeSlack() as slack:                       # or the ``fake_slack`` fixture in conftest.py
        client = AsyncWebClient(token="xoxb-test", base_url=slack.base_url)
        ...
        slack.wait_for(lambda: len(slack.posted("C1")) == 1, timeout=5)
        assert slack.calls("chat.postMessage")[0].body["channel"] == "C1"

What it serves (``POST`` or ``GET`` on ``/api/<method>``, form, JSON or query parameters):

- ``auth.test``; ``chat.postMessage`` (returns a unique, increasing ``ts`` and stores the message with
  its ``metadata`` per channel); ``chat.postEphemeral``; ``chat.update``; ``conversations.history``
  (stored messages newest first, ``metadata`` only with ``include_all_metadata``; honours ``limit``,
  ``cursor``, ``oldest``, ``latest``); ``users.info`` (locale from ``user_locales``); ``views.publish``;
  ``views.open`` / ``views.update`` (modals by view id, in ``modals``); ``chat.getPermalink``;
  ``usergroups.users.list`` (from ``usergroups``); ``files.info`` (from ``files``); any other method
  answers ``{"ok": true}``.
- ``GET /files/<name>`` serves ``files[name]`` bytes with a ``Bearer`` token, else an HTML login page with
  status 200 (as real Slack does).
- Every API call needs a token (``Authorization: Bearer …`` or a ``token`` parameter), else
  ``not_authed``.

Block Kit, checked as Slack checks it: a ``chat.postMessage``, ``chat.postEphemeral``, ``chat.update``,
``views.publish``/``open``/``update`` or ``response_url`` payload whose blocks repeat a ``block_id``, or
repeat an ``action_id`` within one block, is refused (``invalid_blocks``; a ``response_url`` answers 400)
and not processed. Refused calls are not in ``calls()``; they are kept in ``rejected``, and ``stop()``
fails the test when there are any (``strict=False`` for a test that sends them on purpose).

Scripting: ``queue(method, status, body, headers, times, process)`` makes the next calls of ``method``
answer that way (e.g. 500 twice, or 429 with ``Retry-After``; status 0 drops the connection, a
connection error; ``process=True`` still performs the call, as when a post landed but the client saw
an error). ``hold(method)`` blocks its next calls until ``release(method, record=...)``
(``record=False`` answers them 500 unprocessed). Every call is recorded as a :class:`Call` in a
thread-safe list: ``calls(method)``. ``wait_for(predicate, timeout)`` polls with a
deadline; never use fixed sleeps.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Call:
    """One request the fake received."""

    method: str  # Slack method ("chat.postMessage") or the raw path for non-API requests
    http_method: str
    body: dict[str, Any]
    headers: dict[str, str]
    error: str | None = None  # why the fake refused it, as Slack would (only in ``rejected``)


@dataclass
class _Scripted:
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    process: bool = False


@dataclass
class _Hold:
    released: threading.Event = field(default_factory=threading.Event)
    record: bool = True
    waiting: int = 0


def _byte_range(data: bytes, header: str) -> bytes:
    """The part of ``data`` a ``Range: bytes=a-b`` or ``bytes=-n`` header asks for (one range)."""
    start, _, end = header.removeprefix("bytes=").partition("-")
    if not start:
        return data[-int(end) :]
    return data[int(start) : int(end) + 1 if end else len(data)]


_BLOCK_METHODS = {"chat.postMessage", "chat.postEphemeral", "chat.update"}
_VIEW_METHODS = {"views.publish", "views.open", "views.update"}


def _elements(block: dict[str, Any]) -> list[Any]:
    """The interactive parts of a block: its elements, its accessory, an input's element."""
    found = list(block.get("elements") or []) if isinstance(block.get("elements"), list) else []
    found += [block[key] for key in ("accessory", "element") if isinstance(block.get(key), dict)]
    return found


def blocks_problem(blocks: Any) -> str | None:
    """What Slack would refuse in ``blocks`` (a list of Block Kit blocks, or its JSON): a ``block_id``
    used twice in the message or view, or an ``action_id`` used twice within one block. None if fine."""
    blocks = _json_arg(blocks)
    if not isinstance(blocks, list):
        return None
    block_ids: set[str] = set()
    for number, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        block_id = block.get("block_id")
        if block_id is not None:
            if block_id in block_ids:
                return f"[ERROR] duplicate block_id {block_id!r} [json-pointer:/blocks/{number}/block_id]"
            block_ids.add(block_id)
        action_ids: set[str] = set()
        for element in _elements(block):
            action_id = element.get("action_id") if isinstance(element, dict) else None
            if action_id is None:
                continue
            if action_id in action_ids:
                return f"[ERROR] duplicate action_id {action_id!r} in one block [json-pointer:/blocks/{number}]"
            action_ids.add(action_id)
    return None


def payload_problem(method: str, args: dict[str, Any]) -> str | None:
    """What Slack would refuse in the blocks of a call of ``method`` (an API method, or ``hooks/…`` for a
    response_url) with ``args``; None when there is nothing to refuse."""
    if method in _BLOCK_METHODS or method.startswith("hooks/"):
        return blocks_problem(args.get("blocks"))
    if method in _VIEW_METHODS:
        view = _json_arg(args.get("view"))
        return blocks_problem(view.get("blocks")) if isinstance(view, dict) else None
    return None


def wait_for(predicate: Callable[[], object], timeout: float = 5.0, interval: float = 0.01) -> None:
    """Poll ``predicate`` until truthy; raise AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


class FakeSlack:
    """The fake server. Start with ``start()`` or ``with``; ``base_url`` is the Web API root."""

    def __init__(self, *, strict: bool = True) -> None:
        self._lock = threading.Lock()
        self._calls: list[Call] = []
        self.rejected: list[Call] = []  # calls refused for invalid blocks (never in ``calls()``)
        self.strict = strict  # stop() fails when a call was refused
        self._messages: dict[str, list[dict[str, Any]]] = {}
        self._scripted: dict[str, list[_Scripted]] = {}
        self._holds: dict[str, _Hold] = {}
        self._seq = itertools.count(1)
        self._base_ts = int(time.time())
        self.user_locales: dict[str, str] = {}
        self.files: dict[str, bytes] = {}
        self.file_types: dict[str, tuple[str, str]] = {}  # name -> (mimetype, filetype) files.info reports
        self.redirects: dict[str, str] = {}  # name -> where GET /files/<name> redirects (302)
        self.ranges = True  # answer "Range: bytes=..." with 206 and the part, as Slack's file servers do
        self.views: dict[str, dict[str, Any]] = {}
        self.modals: dict[str, dict[str, Any]] = {}  # view id -> the modal as last opened or updated
        self.usergroups: dict[str, list[str]] = {}  # group id -> user ids (usergroups.users.list)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-slack", daemon=True
        )

    # lifecycle -------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/api/"

    def start(self) -> FakeSlack:
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            for hold in self._holds.values():
                hold.record = False
                hold.released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        if self.strict and self.rejected:
            refused = "; ".join(f"{call.method}: {call.error}" for call in self.rejected)
            raise AssertionError(f"Slack would have refused {len(self.rejected)} call(s): {refused}")

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # scripting -------------------------------------------------------------------------------------
    def queue(
        self,
        method: str,
        status: int = 500,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
        process: bool = False,
    ) -> None:
        """Answer the next ``times`` calls of ``method`` with this status/body/headers. The call is not
        processed unless ``process=True`` (a post that landed although the client saw an error)."""
        default = {"ok": False, "error": "ratelimited" if status == 429 else "internal_error"}
        with self._lock:
            self._scripted.setdefault(method, []).extend(
                _Scripted(status, body or default, headers or {}, process) for _ in range(times)
            )

    def hold(self, method: str) -> None:
        """Block calls of ``method`` (before processing) until :meth:`release`."""
        with self._lock:
            self._holds[method] = _Hold()

    def held(self, method: str) -> int:
        """How many calls of ``method`` are blocked right now."""
        with self._lock:
            hold = self._holds.get(method)
            return hold.waiting if hold else 0

    def release(self, method: str, record: bool = True) -> None:
        """Let held calls go: processed normally with ``record=True``, else answered 500 unprocessed."""
        with self._lock:
            hold = self._holds.pop(method, None)
        if hold is not None:
            hold.record = record
            hold.released.set()

    # inspection ------------------------------------------------------------------------------------
    def calls(self, method: str | None = None) -> list[Call]:
        with self._lock:
            return [c for c in self._calls if method is None or c.method == method]

    def clear_calls(self) -> None:
        """Forget the calls so far (the harness drops the start-up ``auth.test``)."""
        with self._lock:
            self._calls.clear()

    def posted(self, channel: str) -> list[dict[str, Any]]:
        """Messages stored in ``channel``, oldest first."""
        with self._lock:
            return list(self._messages.get(channel, []))

    def add_message(self, channel: str, message: dict[str, Any]) -> str:
        """Store a message as if posted earlier; returns its ts."""
        with self._lock:
            ts = self._next_ts()
            self._messages.setdefault(channel, []).append({**message, "ts": ts})
            return ts

    wait_for = staticmethod(wait_for)

    # request handling (server threads) -------------------------------------------------------------
    def _next_ts(self) -> str:
        seq = next(self._seq)
        return f"{self._base_ts + seq // 1_000_000}.{seq % 1_000_000:06d}"

    def _record(self, call: Call) -> None:
        with self._lock:
            if call.error is None:
                self._calls.append(call)
            else:
                self.rejected.append(call)

    def _before(self, method: str) -> _Scripted | None:
        """A scripted or held answer for this call, or None to process it normally."""
        with self._lock:
            scripted = self._scripted.get(method)
            if scripted:
                return scripted.pop(0)
            hold = self._holds.get(method)
            if hold is not None:
                hold.waiting += 1
        if hold is None:
            return None
        hold.released.wait()
        with self._lock:
            hold.waiting -= 1
        if hold.record:
            return None
        return _Scripted(500, {"ok": False, "error": "internal_error"}, {})

    def _api(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if method == "auth.test":
                return {"ok": True, "team_id": "T1", "user_id": "UBOT", "bot_id": "BBOT", "team": "test"}
            if method == "chat.postMessage":
                ts = self._next_ts()
                message = {"type": "message", "ts": ts, "bot_id": "BBOT", "user": "UBOT", **_message(args)}
                self._messages.setdefault(str(args.get("channel")), []).append(message)
                return {"ok": True, "channel": args.get("channel"), "ts": ts, "message": message}
            if method == "chat.postEphemeral":
                return {"ok": True, "message_ts": self._next_ts()}
            if method == "chat.update":
                for message in self._messages.get(str(args.get("channel")), []):
                    if message["ts"] == args.get("ts"):
                        message.update(_message(args))
                return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts")}
            if method == "conversations.history":
                return self._history(args)
            if method == "users.info":
                user = str(args.get("user"))
                return {"ok": True, "user": {"id": user, "locale": self.user_locales.get(user, "en-US")}}
            if method == "views.publish":
                self.views[str(args.get("user_id"))] = _json_arg(args.get("view"))
                return {"ok": True, "view": self.views[str(args.get("user_id"))]}
            if method == "views.open":
                view_id = f"V{next(self._seq)}"
                self.modals[view_id] = {**_json_arg(args.get("view")), "id": view_id}
                return {"ok": True, "view": self.modals[view_id]}
            if method == "views.update":
                view_id = str(args.get("view_id"))
                if view_id not in self.modals:
                    return {"ok": False, "error": "not_found"}
                self.modals[view_id] = {**_json_arg(args.get("view")), "id": view_id}
                return {"ok": True, "view": self.modals[view_id]}
            if method == "chat.getPermalink":
                ts = str(args.get("message_ts")).replace(".", "")
                return {"ok": True, "permalink": f"https://test.slack.com/archives/{args.get('channel')}/p{ts}"}
            if method == "usergroups.users.list":
                group = str(args.get("usergroup"))
                if group not in self.usergroups:
                    return {"ok": False, "error": "no_such_subteam"}
                return {"ok": True, "users": self.usergroups[group]}
            if method == "files.info":
                name = str(args.get("file"))
                if name not in self.files:
                    return {"ok": False, "error": "file_not_found"}
                private = f"{self.url}/files/{name}"
                return {
                    "ok": True,
                    "file": {
                        "id": name,
                        "name": name,
                        "mimetype": self.file_types.get(name, ("text/plain", "text"))[0],
                        "filetype": self.file_types.get(name, ("text/plain", "text"))[1],
                        "size": len(self.files[name]),
                        "url_private": private,
                        "url_private_download": private,
                    },
                }
            return {"ok": True}

    def _history(self, args: dict[str, Any]) -> dict[str, Any]:
        newest_first = list(reversed(self._messages.get(str(args.get("channel")), [])))
        if args.get("oldest"):
            newest_first = [m for m in newest_first if float(m["ts"]) > float(args["oldest"])]
        if args.get("latest"):
            newest_first = [m for m in newest_first if float(m["ts"]) < float(args["latest"])]
        start = int(args.get("cursor") or 0)
        limit = int(args.get("limit") or 100)
        page = newest_first[start : start + limit]
        with_metadata = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
        out = [m if with_metadata else {k: v for k, v in m.items() if k != "metadata"} for m in page]
        has_more = start + limit < len(newest_first)
        return {
            "ok": True,
            "messages": out,
            "has_more": has_more,
            "response_metadata": {"next_cursor": str(start + limit) if has_more else ""},
        }


def _json_arg(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _message(args: dict[str, Any]) -> dict[str, Any]:
    keys = ("text", "blocks", "metadata", "thread_ts", "channel")
    return {key: _json_arg(args[key]) for key in keys if key in args}


def _handler_for(fake: FakeSlack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _args(self) -> dict[str, Any]:
            split = urlsplit(self.path)
            args: dict[str, Any] = {k: v[-1] for k, v in parse_qs(split.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            kind = self.headers.get("Content-Type") or ""
            if raw and "json" in kind:
                args.update(json.loads(raw))
            elif raw:
                args.update({k: v[-1] for k, v in parse_qs(raw.decode()).items()})
            return args

        def _send(self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (e.g. a SIGKILLed test process); nothing to answer

        def _handle(self) -> None:
            split = urlsplit(self.path)
            args = self._args()
            headers = {k.lower(): v for k, v in self.headers.items()}
            if split.path.startswith("/files/"):
                fake._record(Call(split.path, self.command, args, headers))
                name = split.path.removeprefix("/files/")
                if name in fake.redirects:
                    self._send(302, b"", "text/plain", {"Location": fake.redirects[name]})
                elif not headers.get("authorization", "").startswith("Bearer ") or name not in fake.files:
                    self._send(200, b"<!DOCTYPE html><html><body>Sign in to Slack</body></html>", "text/html")
                elif fake.ranges and headers.get("range", "").startswith("bytes="):
                    self._send(206, _byte_range(fake.files[name], headers["range"]), "application/octet-stream")
                else:
                    self._send(200, fake.files[name], "application/octet-stream")
                return
            method = split.path.removeprefix("/api/").strip("/")
            problem = payload_problem(method, args)
            fake._record(Call(method, self.command, args, headers, problem))
            if problem is not None and method.startswith("hooks/"):
                self._send(400, b"invalid_blocks", "text/plain")
                return
            token = headers.get("authorization", "").removeprefix("Bearer ").strip() or args.get("token")
            if not token:
                self._send(200, b'{"ok": false, "error": "not_authed"}', "application/json")
                return
            if problem is not None:
                error = "invalid_arguments" if method in _VIEW_METHODS else "invalid_blocks"
                body = {"ok": False, "error": error, "response_metadata": {"messages": [problem]}}
                self._send(200, json.dumps(body).encode(), "application/json; charset=utf-8")
                return
            scripted = fake._before(method)
            if scripted is None:
                status, body, extra = 200, fake._api(method, args), {}
            else:
                if scripted.process:
                    fake._api(method, args)
                if scripted.status == 0:  # drop the connection without answering
                    self.close_connection = True
                    return
                status, body, extra = scripted.status, scripted.body, scripted.headers
            self._send(status, json.dumps(body).encode(), "application/json; charset=utf-8", extra)

        do_GET = _handle
        do_POST = _handle

    return Handler
