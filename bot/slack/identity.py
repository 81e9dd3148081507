"""Who the bot is in Slack, learned once at start-up, so no request ever waits for ``auth.test``.

Bolt's single-workspace authorization calls ``auth.test`` lazily, on the first request and before the
acknowledgement: with Slack's API slow or unreachable, that first slash command fails with HTTP 500 after
seconds. Instead the bot checks its token when it starts (a token Slack refuses stops it with one line), and
Bolt gets an ``authorize`` function that answers from memory. Until ``auth.test`` has answered (Slack
unreachable at start: it is retried in the background), the bot's user id comes from the event itself
(``authorizations[0].user_id``), which is all the handlers need it for.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

# auth.test errors that mean the token itself is wrong: retrying cannot help.
REJECTED = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"})
_EVENT_BOT_USER = "incident_bot_event_bot_user"


class TokenRejected(Exception):
    """Slack refused SLACK_BOT_TOKEN (``auth.test`` said so)."""


@dataclass
class BotIdentity:
    token: str
    user_id: str | None = None
    bot_id: str | None = None
    team_id: str | None = None
    enterprise_id: str | None = None
    known: asyncio.Event = field(default_factory=asyncio.Event)

    def learn(self, answer: Mapping[str, Any]) -> None:
        self.user_id = answer.get("user_id")
        self.bot_id = answer.get("bot_id")
        self.team_id = answer.get("team_id")
        self.enterprise_id = answer.get("enterprise_id")
        self.known.set()

    async def check(self, client: AsyncWebClient, within: float = 5.0) -> bool:
        """One ``auth.test``: True when it answered, False when Slack could not be reached ``within`` seconds.
        Raises :class:`TokenRejected` when Slack refused the token."""
        try:
            async with asyncio.timeout(within):
                answer = await client.auth_test()
        except SlackApiError as exc:
            error = str(exc.response.get("error") or "")
            if error in REJECTED:
                raise TokenRejected(f"Slack rejected SLACK_BOT_TOKEN ({error})") from None
            log.warning("auth.test failed (%s); will retry", error or exc.response.status_code)
            return False
        except (TimeoutError, OSError, ValueError) as exc:
            log.warning("Slack's API did not answer auth.test (%s); will retry", type(exc).__name__)
            return False
        self.learn(answer.data if isinstance(answer.data, dict) else {})
        log.info("signed in to Slack as %s in %s", self.user_id, self.team_id)
        return True

    async def keep_checking(
        self,
        client: AsyncWebClient,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        first_delay: float = 2.0,
        max_delay: float = 60.0,
    ) -> None:
        """Retry ``auth.test`` with backoff until it answers (a refused token is logged and ends it)."""
        delay = first_delay
        while not self.known.is_set():
            await sleep(delay)
            try:
                if await self.check(client):
                    return
            except TokenRejected as exc:
                log.error("%s: replies will fail until the token is fixed", exc)
                return
            delay = min(max_delay, delay * 2)


def authorizer(identity: BotIdentity) -> Callable[..., Awaitable[AuthorizeResult]]:
    """Bolt's ``authorize``: from memory, never a network call. (A plain function: Bolt passes arguments
    by the names of its parameters.)"""

    async def authorize(enterprise_id: str | None, team_id: str | None, context: AsyncBoltContext) -> AuthorizeResult:
        return AuthorizeResult(
            enterprise_id=enterprise_id or identity.enterprise_id,
            team_id=team_id or identity.team_id,
            bot_token=identity.token,
            bot_id=identity.bot_id,
            bot_user_id=identity.user_id or context.get(_EVENT_BOT_USER),
        )

    return authorize


async def remember_event_bot_user(
    body: dict[str, Any], context: AsyncBoltContext, next: Callable[[], Awaitable[Any]]
) -> Any:
    """Bolt's ``before_authorize``: the bot's user id an Events API delivery carries."""
    authorizations = body.get("authorizations")
    if isinstance(authorizations, list) and authorizations and isinstance(authorizations[0], dict):
        first = authorizations[0]
        if first.get("is_bot") and isinstance(first.get("user_id"), str):
            context[_EVENT_BOT_USER] = first["user_id"]
    return await next()


_IDENTITIES: weakref.WeakKeyDictionary[AsyncApp, BotIdentity] = weakref.WeakKeyDictionary()


def attach(app: AsyncApp, identity: BotIdentity) -> None:
    _IDENTITIES[app] = identity


def identity_of(app: AsyncApp) -> BotIdentity | None:
    return _IDENTITIES.get(app)
