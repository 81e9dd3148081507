"""What every Slack surface shares: the user's language order (saved preference, else their Slack locale
from ``users.info``, cached) and sending a rendered ``Reply`` through a ``response_url``."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import aiohttp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.services import Services
from bot.app.workers import Busy
from bot.model.case import Lang
from bot.model.results import Reply
from bot.replies.blocks import section
from bot.replies.labels import label
from bot.replies.render import message_reply

log = logging.getLogger(__name__)

_P = ParamSpec("_P")
_T = TypeVar("_T")


# What a Web API call raises when Slack cannot be reached (refused, reset, timed out), as against the
# SlackApiError of an answer that says no.
UNREACHABLE = (aiohttp.ClientError, TimeoutError, OSError)


class LocaleCache:
    """Slack locales per user, fetched with ``users.info`` and kept ``ttl_seconds`` (locales rarely change).

    A failed lookup is not cached and yields None (the answer falls back to the saved preference or
    English); it never fails the request.
    """

    def __init__(
        self,
        ttl_seconds: float = 3600.0,
        max_entries: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_seconds = ttl_seconds
        self.max_entries = max_entries
        self._clock = clock
        self._entries: dict[str, tuple[float, str | None]] = {}
        # One lookup per user at a time: requests that arrive while it runs wait for it.
        self._pending: dict[str, asyncio.Task[str | None]] = {}

    async def get(self, client: AsyncWebClient, user_id: str) -> str | None:
        now = self._clock()
        hit = self._entries.get(user_id)
        if hit is not None and now - hit[0] < self.ttl_seconds:
            return hit[1]
        task = self._pending.get(user_id)
        if task is None:
            task = asyncio.ensure_future(self._fetch(client, user_id, now))
            self._pending[user_id] = task
            task.add_done_callback(lambda _: self._pending.pop(user_id, None))
        return await asyncio.shield(task)

    async def _fetch(self, client: AsyncWebClient, user_id: str, now: float) -> str | None:
        try:
            response = await client.users_info(user=user_id, include_locale=True)
        except SlackApiError as error:
            log.warning("users.info failed for %s: %s", user_id, error.response.get("error"))
            return None
        except UNREACHABLE as error:  # Slack unreachable: answer in English
            log.warning("users.info failed for %s: %s", user_id, type(error).__name__)
            return None
        user: dict[str, Any] = response.get("user") or {}
        locale = user.get("locale")
        if len(self._entries) >= self.max_entries:
            self._entries.clear()
        self._entries[user_id] = (now, str(locale) if locale else None)
        return self._entries[user_id][1]


async def user_langs(
    services: Services, locales: LocaleCache, client: AsyncWebClient, user_id: str | None
) -> tuple[Lang, ...]:
    """The user's language order: saved preference, else Slack locale, else English first."""
    locale = await locales.get(client, user_id) if user_id else None
    return await services.pools.io(services.incident.langs_for_user, user_id, locale)


async def send_via_response_url(
    services: Services,
    respond: AsyncRespond,
    reply: Reply,
    *,
    channel: str | None,
    user: str | None,
    in_channel: bool = False,
    replace: bool = False,
) -> None:
    """Post ``reply`` ephemerally (or for everyone with ``in_channel``), replacing the clicked message
    with ``replace``. Links never unfurl: a paste's URLs stay text."""
    # Buttons are bound to where they are shown: the channel, and the user when only they see the answer.
    reply = services.feedback.seal(reply, channel or "", None if in_channel else user)
    await respond(
        text=reply.text,
        blocks=reply.blocks,
        response_type="in_channel" if in_channel else "ephemeral",
        replace_original=replace,
        unfurl_links=False,
        unfurl_media=False,
    )


def as_dict(value: object) -> dict[str, Any]:
    """A payload field as a dict (``{}`` when Slack sent something else): payloads are read, never trusted."""
    return value if isinstance(value, dict) else {}


async def say_privately(services: Services, respond: AsyncRespond, said_md: str, *, channel: str, user: str) -> None:
    """A one-line answer to the clicker only. ``said_md`` is ours (mentions of operators included); the caller
    escapes any part a person or a scheduler wrote."""
    reply = Reply(text=said_md, blocks=[section(said_md)], plain=said_md)
    await send_via_response_url(services, respond, reply, channel=channel, user=user)


async def matched(
    services: Services, explicit: bool, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs
) -> _T | None:
    """``fn(*args, **kwargs)`` on the matching pool; None when matching is at capacity, counted in
    ``incident_bot_busy_total`` (the caller answers :func:`busy_reply` to an explicit request and drops an
    unprompted paste). Never raises ``Busy``: an exception after ``ack()`` would make Bolt answer 404."""
    try:
        return await services.pools.match(fn, *args, **kwargs)
    except Busy:
        kind = "explicit" if explicit else "unprompted"
        services.incident.metrics.busy.labels(kind=kind).inc()
        log.warning("matching is at capacity: %s request %s", kind, "answered busy" if explicit else "dropped")
        return None


def busy_reply(langs: tuple[Lang, ...]) -> Reply:
    """What an explicit request gets while matching is at capacity (both languages, reader's first)."""
    return message_reply("\n".join(label("busy", lang) for lang in langs))
