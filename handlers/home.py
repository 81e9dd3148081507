"""App Home: on ``app_home_opened`` for the Home tab, publish the view the service builds (recently
reviewed cases, the cases matched most in the last 30 days, how often answers were judged helpful).

Every open publishes afresh (the view is the same for everyone and cheap to build), so no ``hash`` is
passed: the last publish wins, which is the newest data anyway."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.services import Services
from handlers.common import LocaleCache, user_langs


def register(app: AsyncApp, services: Services, locales: LocaleCache) -> None:
    @app.event("app_home_opened")
    async def on_app_home_opened(event: dict[str, Any], client: AsyncWebClient) -> None:
        """Fires on every open of any tab: only the Home tab gets a view (others are answered 200)."""
        user_id = str(event.get("user") or "")
        if event.get("tab") != "home" or not user_id:
            return
        langs = await user_langs(services, locales, client, user_id)
        view = await services.pools.side(services.feedback.home_view, langs)  # never on the ack path's pool
        await client.views_publish(user_id=user_id, view=view)
