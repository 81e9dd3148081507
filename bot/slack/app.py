"""The Bolt app: ``create_app(settings, services)`` builds the ``AsyncApp`` with its Web API client,
event dedupe, the one global error handler and every listener. Nothing is built at import time.

With the rest of ``bot.slack``, the only part of ``bot/`` that imports slack_bolt and ``handlers``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp
import structlog
from slack_bolt.async_app import AsyncApp, AsyncBoltContext, AsyncRespond
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.services import Services
from bot.ops.metrics import Metrics
from bot.ops.settings import Settings
from bot.slack.identity import BotIdentity, attach, authorizer, remember_event_bot_user
from bot.storage import StorageError
from handlers import register_all

log = logging.getLogger(__name__)

# Message subtypes a listener may answer; only these take a (channel, ts) dedupe record.
_ANSWERED_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})
DUPLICATE_HEADER = "x-incident-bot-skipped"
_SORRY = "Sorry, something went wrong while answering; it has been logged. Please try again."


class _SkipTokenNotice(logging.Filter):
    """Bolt reads SLACK_BOT_TOKEN from the environment itself and, given a client too, warns on every start
    that the token is unused: true and expected here (the token goes through ``authorize``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


_BOLT_LOG = logging.getLogger("slack_bolt.AsyncApp")
_BOLT_LOG.addFilter(_SkipTokenNotice())


def build_client(
    token: str, base_url: str, *, rate_limit_retries: int = 2, metrics: Metrics | None = None
) -> AsyncWebClient:
    """The app's Web API client: ``base_url`` (``SLACK_API_URL``), the connection-error retry kept, and
    429s retried after ``Retry-After``; with ``metrics``, every failed call attempt is counted in
    ``slack_errors``. Bolt copies these handlers to the client it builds for every request."""
    client = AsyncWebClient(token=token, base_url=base_url)
    _ensure_retry_handlers(client, rate_limit_retries, metrics)
    return client


class ErrorCounter(AsyncRetryHandler):
    """Never retries: counts each failed Web API attempt in ``slack_errors`` by method and error.

    A retry handler is the one hook Bolt carries over to the fresh client it builds per request, and
    slack_sdk asks every handler (in order, until one retries) about every response and connection
    error, so this sees errors that listeners catch themselves, too. It must come first in the list.
    """

    def __init__(self, metrics: Metrics) -> None:
        super().__init__(max_retry_count=0)
        self.metrics = metrics

    async def can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if error is not None:
            self._count(request, type(error).__name__)
        elif response is not None:
            body = response.body if isinstance(response.body, dict) else {}
            if response.status_code != 200:
                self._count(request, str(body.get("error") or f"http_{response.status_code}"))
            elif body.get("ok") is False:
                self._count(request, str(body.get("error") or "unknown"))
        return False

    def _count(self, request: HttpRequest, error: str) -> None:
        method = request.url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "unknown"
        self.metrics.slack_errors.labels(method=method, error=error).inc()


def _ensure_retry_handlers(client: AsyncWebClient, rate_limit_retries: int, metrics: Metrics | None = None) -> None:
    handlers = client.retry_handlers
    if metrics is not None and not any(isinstance(h, ErrorCounter) for h in handlers):
        handlers.insert(0, ErrorCounter(metrics))
    if not any(isinstance(h, AsyncConnectionErrorRetryHandler) for h in handlers):
        handlers.append(AsyncConnectionErrorRetryHandler())
    if not any(isinstance(h, AsyncRateLimitErrorRetryHandler) for h in handlers):
        handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=rate_limit_retries))


def create_app(
    settings: Settings,
    services: Services,
    *,
    client: AsyncWebClient | None = None,
    process_before_response: bool = False,
) -> AsyncApp:
    """Build the Bolt app. ``client`` replaces the default one (it gets the retry handlers too);
    ``process_before_response`` stays False outside tests. Raises ValueError without a bot token.

    No network here, and none before an ack: the bot's identity comes from ``auth.test`` at start-up
    (``start_slack``) and Bolt authorizes every request from memory (``bot.slack.identity``).
    """
    service = services.incident
    if client is None:
        if settings.slack_bot_token is None:
            raise ValueError("create_app needs SLACK_BOT_TOKEN")
        client = build_client(
            settings.slack_bot_token.get_secret_value(), settings.slack_api_url, metrics=service.metrics
        )
    else:
        _ensure_retry_handlers(client, 2, service.metrics)
    if not client.token:
        raise ValueError("create_app needs a client with the bot token")
    identity = BotIdentity(client.token)
    # Bolt copies this client (base URL, timeout, retry handlers) for every request and gives the copy the
    # token ``identity.authorize`` returns; without a token of its own it never calls auth.test itself.
    tokenless = AsyncWebClient(
        token=None, base_url=client.base_url, timeout=client.timeout, retry_handlers=client.retry_handlers
    )
    secret = settings.slack_signing_secret
    app = AsyncApp(
        name="incident-bot",
        client=tokenless,
        authorize=authorizer(identity),
        before_authorize=remember_event_bot_user,
        logger=_BOLT_LOG,
        signing_secret=secret.get_secret_value() if secret is not None else None,
        # Socket Mode needs no signing secret (Bolt skips verification there); HTTP mode requires one.
        request_verification_enabled=secret is not None,
        process_before_response=process_before_response,
    )
    attach(app, identity)
    app.middleware(_observe_middleware(service.metrics))  # first: duplicates are counted and logged too
    app.middleware(_dedupe_middleware(services, settings.dedupe_ttl_seconds))
    app.error(_error_handler(service.metrics))

    register_all(app, services, settings)
    return app


# -- observability -------------------------------------------------------------------------------------


def request_kind(body: Mapping[str, Any]) -> str:
    """The ``events`` metric label: the event's type for Events API deliveries, ``slash_command`` for
    commands, else the payload type (``block_actions``, ``view_submission``, ...)."""
    if body.get("type") == "event_callback":
        return str((body.get("event") or {}).get("type") or "unknown")
    if body.get("command"):
        return "slash_command"
    return str(body.get("type") or "unknown")


def log_ids(body: Mapping[str, Any], req: AsyncBoltRequest | None = None) -> dict[str, str]:
    """What every log line of this request carries: the ``event_id`` of an event (plus the retry number
    of a retried delivery), else the ``trigger_id`` of a command or interaction, and the kind. (HTTP
    requests also carry a ``request_id``, Socket Mode ones the ``envelope_id``: see ``slack_runtime``.)"""
    ids = {"kind": request_kind(body)}
    if body.get("event_id"):
        ids["event_id"] = str(body["event_id"])
    elif body.get("trigger_id"):
        ids["trigger_id"] = str(body["trigger_id"])
    retries = req.headers.get("x-slack-retry-num") if req is not None else None
    if retries:
        ids["retry_num"] = str(retries[0])
    return ids


def _observe_middleware(metrics: Metrics) -> Callable[..., Awaitable[BoltResponse | None]]:
    async def observe(
        body: dict[str, Any], req: AsyncBoltRequest, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse | None:
        ids = log_ids(body, req)
        metrics.events.labels(type=ids["kind"]).inc()
        # Bolt's next() only marks the chain to go on after this returns, so the ids are bound for the
        # rest of the request's task, not in a ``with``: later middleware, the listener tasks Bolt starts
        # (they copy the context) and the global error handler all log them. Each HTTP request starts
        # from a cleared context (``slack_runtime``); each Socket Mode envelope runs in a task of its own.
        structlog.contextvars.bind_contextvars(**ids)
        return await next()

    return observe


# -- dedupe --------------------------------------------------------------------------------------------


def mentions_user(text: str, user_id: str | None) -> bool:
    return bool(user_id) and (f"<@{user_id}>" in text or f"<@{user_id}|" in text)


def dedupe_keys(body: Mapping[str, Any]) -> list[str]:
    """Storage keys that must be new for this delivery to be processed: the ``event_id`` (a retried
    delivery) and, for messages and mentions, ``(channel, ts)`` (one message seen as two events)."""
    keys: list[str] = []
    if body.get("event_id"):
        keys.append(f"event:{body['event_id']}")
    event = body.get("event") or {}
    if (
        event.get("type") in {"message", "app_mention"}
        and event.get("subtype") in _ANSWERED_SUBTYPES
        and event.get("channel")
        and event.get("ts")
    ):
        keys.append(f"message:{event['channel']}:{event['ts']}")
    return keys


def _skip(reason: str) -> BoltResponse:
    return BoltResponse(status=200, body="", headers={DUPLICATE_HEADER: reason})


def _dedupe_middleware(services: Services, ttl_seconds: int) -> Callable[..., Awaitable[BoltResponse | None]]:
    service = services.incident

    async def dedupe(
        body: dict[str, Any], context: AsyncBoltContext, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse | None:
        if body.get("type") != "event_callback":
            return await next()
        event = body.get("event") or {}
        if (
            event.get("type") == "message"
            and event.get("channel_type") != "im"
            and mentions_user(str(event.get("text") or ""), context.bot_user_id)
        ):
            # The same message also arrives as app_mention, which answers it as an explicit request.
            return _skip("mention")
        for key in dedupe_keys(body):
            # The I/O pool: a claim never waits behind matching (acks come after this middleware).
            try:
                first = await services.pools.io(service.storage.claim_event, key, service.now(), ttl_seconds)
            except StorageError as exc:
                # Not claimed, so not processed: a 503 makes Slack deliver it again later.
                log.warning("event not claimed, storage unavailable (Slack will retry): %s", exc)
                return BoltResponse(status=503, body="", headers={DUPLICATE_HEADER: "storage-unavailable"})
            if not first:
                log.info("duplicate delivery skipped: %s", key.split(":", 1)[0])
                return _skip("duplicate")
        return await next()

    return dedupe


# -- errors --------------------------------------------------------------------------------------------


def _describe(body: Mapping[str, Any]) -> str:
    """Where an error happened, without user text or tokens."""
    event = body.get("event") or {}
    bits = {
        "type": body.get("type") or ("slash_command" if body.get("command") else None),
        "command": body.get("command"),
        "event": event.get("type"),
        "subtype": event.get("subtype"),
        "event_id": body.get("event_id"),
        "channel": event.get("channel") or body.get("channel_id") or (body.get("channel") or {}).get("id"),
        "user": event.get("user") or body.get("user_id") or (body.get("user") or {}).get("id"),
    }
    return " ".join(f"{k}={v}" for k, v in bits.items() if v)


STORAGE_DOWN = "The bot's database is unavailable right now; please try again in a minute."


def _user_message(error: Exception) -> str:
    if isinstance(error, StorageError):
        return STORAGE_DOWN
    if isinstance(error, SlackApiError) and error.response.get("error") in {"not_in_channel", "channel_not_found"}:
        return "I can't post in this conversation: invite me with `/invite @incident-bot` and try again."
    return _SORRY


def _error_handler(metrics: Metrics) -> Callable[..., Awaitable[None]]:
    async def on_error(
        error: Exception, body: dict[str, Any], client: AsyncWebClient | None, respond: AsyncRespond | None
    ) -> None:
        """The one global error handler: log with context, and tell the user when they asked explicitly."""
        where = _describe(body)
        if isinstance(error, StorageError):
            log.warning("storage unavailable while answering %s: %s", where, error)
        elif isinstance(error, SlackApiError):
            log.error("Slack API error %s (%s): %s", error.response.get("error"), error.response.status_code, where)
        else:
            log.error("unhandled error: %s", where, exc_info=error)
        await _tell_user(_user_message(error), body, client, respond)

    return on_error


async def _tell_user(
    text: str, body: Mapping[str, Any], client: AsyncWebClient | None, respond: AsyncRespond | None
) -> None:
    event = body.get("event") or {}
    try:
        if respond is not None and body.get("response_url"):  # commands and buttons
            await respond(text=text, response_type="ephemeral", replace_original=False)
        elif client is not None and (event.get("type") == "app_mention" or event.get("channel_type") == "im"):
            await client.chat_postMessage(
                channel=str(event["channel"]),
                thread_ts=event.get("thread_ts") or event.get("ts"),
                text=text,
            )
    except (SlackApiError, aiohttp.ClientError, TimeoutError, KeyError) as notify_error:
        log.warning("could not tell the user about the error: %s", type(notify_error).__name__)
