"""What every Slack surface shares: the user's language order (saved preference, else their Slack locale
from ``users.info``, cached) and sending a rendered ``Reply`` through a ``response_url``."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.services import Services
from bot.model.case import Lang
from bot.model.results import Reply

log = logging.getLogger(__name__)


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

    async def get(self, client: AsyncWebClient, user_id: str) -> str | None:
        now = self._clock()
        hit = self._entries.get(user_id)
        if hit is not None and now - hit[0] < self.ttl_seconds:
            return hit[1]
        try:
            response = await client.users_info(user=user_id, include_locale=True)
        except SlackApiError as error:
            log.warning("users.info failed for %s: %s", user_id, error.response.get("error"))
            return None
        user: dict[str, Any] = response.get("user") or {}
        locale = user.get("locale")
        if len(self._entries) >= self.max_entries:
            self._entries.clear()
        self._entries[user_id] = (now, str(locale) if locale else None)
        return self._entries[user_id][1]


async def user_langs(
    services: Services, locales: LocaleCache, client: AsyncWebClient, user_id: str | None
) -> tuple[Lang, Lang]:
    """The user's language order: saved preference, else Slack locale, else English first."""
    locale = await locales.get(client, user_id) if user_id else None
    return await asyncio.to_thread(services.incident.langs_for_user, user_id, locale)


async def send_via_response_url(
    respond: AsyncRespond, reply: Reply, *, in_channel: bool = False, replace: bool = False
) -> None:
    """Post ``reply`` ephemerally (or for everyone with ``in_channel``), replacing the clicked message
    with ``replace``. Links never unfurl: a paste's URLs stay text."""
    await respond(
        text=reply.text,
        blocks=reply.blocks,
        response_type="in_channel" if in_channel else "ephemeral",
        replace_original=replace,
        unfurl_links=False,
        unfurl_media=False,
    )
