"""``/incident``: acknowledge at once, answer through ``service.command`` off the event loop, ephemerally.

Also holds the per-user Slack locale cache (``users.info`` with ``include_locale``) that every surface
uses to pick the language order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.service import IncidentService
from bot.model.case import Lang
from handlers.replies import send_via_response_url

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
    service: IncidentService, locales: LocaleCache, client: AsyncWebClient, user_id: str | None
) -> tuple[Lang, Lang]:
    """The user's language order: saved preference, else Slack locale, else English first."""
    locale = await locales.get(client, user_id) if user_id else None
    return await asyncio.to_thread(service.langs_for_user, user_id, locale)


def register(app: AsyncApp, service: IncidentService, locales: LocaleCache) -> None:
    # Imported here: actions builds on the locale helpers above.
    from handlers.actions import share_value, shareable, with_share_button

    @app.command("/incident")
    async def incident_command(
        ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        await ack()  # first, always: Slack shows an error after 3 s
        text = str(command.get("text") or "")
        user_id = str(command.get("user_id") or "") or None
        channel_id = command.get("channel_id")
        langs = await user_langs(service, locales, client, user_id)
        # Matching is CPU-bound: a worker thread keeps the loop free to ack other requests. A match answer
        # is logged under the user (shown only to them) and its buttons carry the reply id.
        reply, reply_id = await asyncio.to_thread(
            service.answer,
            text,
            user_id=user_id,
            channel_id=channel_id,
            langs=langs,
            log_as=user_id,
            share=shareable(text),
        )
        if shareable(text):
            if reply_id is None and len(text) + 2 > 2000 and user_id:
                # Too long for a button value: keep the answer's case ids in the reply log. The
                # answer was shown only to the asker, so it is logged under the user, not the
                # channel, and does not count for the channel's noise window.
                reply_id = await asyncio.to_thread(service.record_reply, user_id, "", "", reply, "command")
            value = share_value(text, reply_id)
            if value is not None:
                reply = with_share_button(reply, value)
        await send_via_response_url(respond, reply)
