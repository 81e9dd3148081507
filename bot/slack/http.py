"""The HTTP side of the bot, in both modes: ``POST /slack/events`` into Bolt (HTTP mode), and the probes
``/healthz``, ``/readyz`` and ``/metrics``. Every request's log lines carry a request id."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from urllib.parse import parse_qs

import structlog
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_sdk.signature import SignatureVerifier

from bot.app.service import IncidentService
from bot.ops.metrics import CONTENT_TYPE, Metrics
from bot.slack.guard import read_body

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
# Slack's payloads are small (a message is at most 40,000 characters); aiohttp's default cap is 1 MiB.
MAX_REQUEST_BYTES = 2 << 20


def build_web_app(
    bolt: AsyncApp | None,
    service: IncidentService,
    metrics: Metrics | None = None,
    *,
    signing_secret: str | None = None,
    storage_problem: Callable[[], str | None] = lambda: None,
) -> web.Application:
    """The aiohttp app: ``POST /slack/events`` into Bolt (omitted when ``bolt`` is None, i.e. Socket
    Mode), ``GET /healthz`` (the process is up), ``GET /readyz`` (library loaded, storage answers) and
    ``GET /metrics`` (Prometheus text format)."""
    web_app = web.Application(client_max_size=MAX_REQUEST_BYTES, middlewares=[_request_id_middleware])
    registry = metrics or service.metrics

    async def metrics_page(_: web.Request) -> web.Response:
        response = web.Response(body=registry.render())
        response.headers["Content-Type"] = CONTENT_TYPE
        return response

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.Response:
        problem = storage_problem()
        if problem is not None:
            return web.Response(status=503, text=f"storage not ready, retrying: {problem}")
        storage_ok = await asyncio.to_thread(service.storage.ping)
        if len(service.library) > 0 and storage_ok:
            return web.Response(text="ready")
        problem = "storage unreachable" if not storage_ok else "case library is empty"
        return web.Response(status=503, text=problem)

    web_app.router.add_get("/healthz", healthz)
    web_app.router.add_get("/readyz", readyz)
    web_app.router.add_get("/metrics", metrics_page)
    if bolt is not None:
        app = bolt

        verifier = SignatureVerifier(signing_secret) if signing_secret else None

        async def slack_events(request: web.Request) -> web.Response:
            if verifier is not None:
                body = await read_body(request)
                if body is None:
                    return web.json_response({"error": "request body not received in time"}, status=408)
                refusal = check_request(verifier, body, request.headers)
                if refusal is not None:
                    return refusal
            bolt_request = await to_bolt_request(request)
            bolt_response = await app.async_dispatch(bolt_request)
            return await to_aiohttp_response(bolt_response)

        web_app.router.add_post(EVENTS_PATH, slack_events)
    return web_app


def _signed(verifier: SignatureVerifier, body: bytes, headers: Mapping[str, str]) -> bool:
    try:
        return verifier.is_valid(body, headers.get("X-Slack-Request-Timestamp"), headers.get("X-Slack-Signature"))
    except (ValueError, TypeError, OverflowError):  # a timestamp like "abc", or of hundreds of digits
        return False


def _parses(body: bytes, content_type: str) -> bool:
    """Whether a signed body is the JSON or form Slack sends (a form's ``payload`` holds JSON)."""
    try:
        text = body.decode("utf-8")
        if content_type.startswith("application/json"):
            data = json.loads(text)
            return isinstance(data, dict) and _event_shaped(data)
        form = parse_qs(text, keep_blank_values=True, max_num_fields=200)
        payload = form.get("payload")
        return payload is None or _shaped(json.loads(payload[0]))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False


# The events the app listens to, and the fields its listeners read as strings.
_EVENT_STRINGS = {
    "message": ("channel", "user", "ts", "text", "thread_ts", "channel_type", "subtype"),
    "app_mention": ("channel", "user", "ts", "text", "thread_ts"),
    "app_home_opened": ("user", "tab"),
}


def _event_shaped(data: dict[str, object]) -> bool:
    """An event callback Bolt can route: its ``event`` an object with a string ``type``, and the fields the
    listeners read strings where present (Bolt and the listeners would raise on anything else)."""
    if data.get("type") != "event_callback":
        return True
    event = data.get("event")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return False
    fields = _EVENT_STRINGS.get(event["type"], ())
    return all(isinstance(event[name], str) for name in fields if name in event and event[name] is not None)


def _shaped(payload: object) -> bool:
    """An interactive payload Bolt can route: an object, and a view event's ``view`` an object with a type
    (Bolt reads ``view.type`` before any listener runs)."""
    if not isinstance(payload, dict):
        return False
    if payload.get("type") in {"view_submission", "view_closed"}:
        view = payload.get("view")
        return isinstance(view, dict) and isinstance(view.get("type"), str)
    return True


def check_request(verifier: SignatureVerifier, body: bytes, headers: Mapping[str, str]) -> web.Response | None:
    """None for a request Slack signed whose content parses; else the answer: 401 for a missing, bad or
    stale signature (nothing was parsed), 400 for malformed content under a good signature. One WARNING
    line each, naming neither the body nor any header value."""
    if not _signed(verifier, body, headers):
        log.warning("request refused: missing, bad or stale Slack signature (%d bytes)", len(body))
        return web.Response(status=401, text="invalid request signature")
    if not _parses(body, headers.get("Content-Type", "")):
        log.warning("request refused: signed, but not the JSON or form Slack sends (%d bytes)", len(body))
        return web.Response(status=400, text="malformed request")
    return None


@web.middleware
async def _request_id_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Every log line of an HTTP request carries ``request_id`` (a proxy's ``X-Request-Id``, else a new
    one); Bolt's middleware adds the ``event_id`` or ``trigger_id``. Bound on the connection's task and
    replaced by the next request on it, so aiohttp's access log line carries it too."""
    structlog.contextvars.clear_contextvars()
    incoming = request.headers.get("X-Request-Id", "")
    rid = incoming[:64] if incoming.isprintable() and incoming else uuid.uuid4().hex[:16]
    structlog.contextvars.bind_contextvars(request_id=rid)
    return await handler(request)
