"""Who may record a review: the Slack user ids in ``REVIEWERS``, and the members of the user groups it
names (ids starting with ``S``), read with ``usergroups.users.list`` (scope ``usergroups:read``) and kept
for five minutes. A group that cannot be read counts as empty (logged once per refresh)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from handlers.common import UNREACHABLE

log = logging.getLogger("incident_bot.reviewers")
GROUP_TTL_S = 300.0


class Reviewers:
    def __init__(self, ids: Iterable[str], clock: Callable[[], float] = time.monotonic) -> None:
        listed = {i.strip() for i in ids if i.strip()}
        self.users = frozenset(i for i in listed if not i.startswith("S"))
        self.groups = frozenset(i for i in listed if i.startswith("S"))
        self._clock = clock
        self._members: dict[str, tuple[float, frozenset[str]]] = {}

    async def _group(self, client: AsyncWebClient, group: str) -> frozenset[str]:
        cached = self._members.get(group)
        if cached is not None and self._clock() - cached[0] < GROUP_TTL_S:
            return cached[1]
        try:
            answer = await client.usergroups_users_list(usergroup=group)
            members = frozenset(str(u) for u in (answer.get("users") or []))
        except SlackApiError as exc:
            log.warning("user group %s not read: %s", group, exc.response.get("error"))
            members = frozenset()
        except UNREACHABLE as exc:
            # Slack unreachable: keep what was last read (an empty group would strip reviewers' weight).
            log.warning("user group %s not read: %s", group, type(exc).__name__)
            return cached[1] if cached is not None else frozenset()
        self._members[group] = (self._clock(), members)
        return members

    async def everyone(self, client: AsyncWebClient) -> frozenset[str]:
        """The listed users and the members of the listed groups (what a confirmed example weighs by)."""
        members = set(self.users)
        for group in sorted(self.groups):
            members |= await self._group(client, group)
        return frozenset(members)

    async def allows(self, client: AsyncWebClient, user: str | None) -> bool:
        if not user:
            return False
        if user in self.users:
            return True
        for group in sorted(self.groups):
            if user in await self._group(client, group):
                return True
        return False
