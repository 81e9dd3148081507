"""Posts the weekly digest exactly once: ledger claim with a lease, tagged posts, history check, retries.

Protocol for one period: claim it in the ledger (a lease), record the chosen case ids, post each part
with ``metadata`` naming the period and part, then mark the period done. A runner that takes over an
expired claim (or retries after an ambiguous failure) first reads the channel's history and skips parts
that already landed, because ``chat.postMessage`` is not idempotent.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.digest.content import (
    DigestMessage,
    Reviewed,
    latest_slot,
    period_key,
    previous_slot,
    select_new_cases,
)
from bot.digest.plan import DigestPlan
from bot.model.case import Case, Lang
from bot.ops.settings import Settings
from bot.storage.base import DigestEntry, Storage

log = logging.getLogger(__name__)

EVENT_TYPE = "incident_digest"
OutcomeStatus = Literal["posted", "done", "busy", "empty", "lost"]


class DigestError(Exception):
    """Posting failed for good (a non-retryable Slack error, or retries exhausted). The claim is left to
    expire, so a later ``run_due`` finishes the period."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff for Slack calls: ``base * 2**n`` seconds, capped at ``max_seconds``."""

    attempts: int = 6
    base_seconds: float = 1.0
    max_seconds: float = 30.0

    def delay(self, failure: int) -> float:
        return float(min(self.max_seconds, self.base_seconds * 2**failure))


@dataclass(frozen=True, slots=True)
class DigestParams:
    """Everything the runner needs from settings, as plain values (tests pass small leases and backoff)."""

    cron: str = "0 9 * * mon"
    timezone: str = "Asia/Seoul"
    lookback_days: int = 30
    post_empty: bool = False
    lease_seconds: int = 600
    lang_order: tuple[Lang, ...] = ("en", "ko")
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    history_limit: int = 200  # messages per conversations.history page
    history_pages: int = 3

    @classmethod
    def from_settings(cls, settings: Settings) -> DigestParams:
        return cls(
            cron=settings.digest_cron,
            timezone=settings.digest_timezone,
            lookback_days=settings.digest_lookback_days,
            post_empty=settings.digest_post_empty,
            lease_seconds=settings.digest_lease_seconds,
        )


@dataclass(frozen=True, slots=True)
class DigestOutcome:
    """What ``run_due`` did for one period.

    ``posted``: this runner finished it; ``done``: already finished; ``busy``: someone else holds an
    unexpired claim (try again at ``retry_at``); ``empty``: nothing to post, marked done; ``lost``: the
    claim was taken over mid-way (the new owner finishes).
    """

    period_key: str
    status: OutcomeStatus
    message_ts: tuple[str, ...] = ()
    skipped_parts: int = 0
    retry_at: datetime | None = None


def digest_client(token: str, base_url: str = AsyncWebClient.BASE_URL, timeout: int = 30) -> AsyncWebClient:
    """An ``AsyncWebClient`` for the runner: no built-in retry handlers, since a blind re-send after a
    dropped connection could double a post; the runner retries itself and checks history first."""
    return AsyncWebClient(token=token, base_url=base_url, timeout=timeout, retry_handlers=[])


def default_owner() -> str:
    """A ledger owner id unique to this runner: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class DigestRunner:
    """Runs the digest for the latest due slot against a storage ledger and a Slack client."""

    def __init__(
        self,
        storage: Storage,
        client: AsyncWebClient,
        channel: str,
        params: DigestParams,
        cases: Callable[[], Sequence[Reviewed]],
        clock: Callable[[], datetime],
        owner: str | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        lookup: Callable[[str], Case | None] | None = None,
        nodes: Callable[[datetime, datetime], Sequence[tuple[str, str]]] | None = None,
    ) -> None:
        """``cases``: what may go into a digest (whole cases, or summaries with ``lookup`` to read a chosen
        one in full)."""
        self.storage = storage
        self.client = client
        self.channel = channel
        self.params = params
        self.cases = cases
        self.lookup = lookup
        # (mrkdwn, plain) lines of the hosts that failed more than once between two times (node memory).
        self.nodes = nodes
        self.clock = clock
        self.owner = owner or default_owner()
        self._sleep = sleep
        if client.retry_handlers:
            log.warning("digest client has retry handlers; a re-sent post may double (use digest_client)")

    # ----------------------------------------------------------------------------------------------
    # public entry points

    def latest_slot(self, now: datetime) -> datetime:
        """The latest cron slot at or before ``now``."""
        return latest_slot(self.params.cron, self.params.timezone, now)

    async def run_due(self, now: datetime) -> DigestOutcome:
        """Post the digest of the latest slot <= ``now`` unless the ledger says it is done or held.

        Called by the cron job and once at start-up (the catch-up for a slot missed while down). Older
        periods whose claim expired unfinished are completed first. Raises DigestError when Slack fails
        for good; the claim then expires and a later call finishes the period.
        """
        slot = self.latest_slot(now)
        key = period_key(slot)
        entries = await asyncio.to_thread(self.storage.list_digests)
        for entry in entries:
            if entry.period_key != key and entry.status == "claimed" and entry.lease_until <= now:
                await self._run_period(datetime.fromisoformat(entry.period_key), now, latest=False)
        return await self._run_period(slot, now, latest=True)

    # ----------------------------------------------------------------------------------------------
    # one period

    async def _run_period(self, slot: datetime, now: datetime, latest: bool) -> DigestOutcome:
        key = period_key(slot)
        claim = await asyncio.to_thread(self.storage.claim_digest, key, self.owner, now, self.params.lease_seconds)
        entry = await asyncio.to_thread(self.storage.get_digest, key)
        if claim is None:
            if entry is not None and entry.status == "claimed":
                log.info("digest %s is held by %s until %s", key, entry.owner, entry.lease_until)
                return DigestOutcome(key, "busy", retry_at=entry.lease_until)
            return DigestOutcome(key, "done", entry.message_ts if entry else ())
        takeover = claim.attempt > 1
        if takeover:
            log.warning("taking over digest %s (attempt %d)", key, claim.attempt)
        reuse = takeover and entry is not None and bool(entry.case_ids)
        if not latest and not reuse:
            # An older period that never got as far as choosing cases: its cases flow into the latest one.
            return await self._complete(key, (), 0)
        chosen = await self._choose(slot, entry, reuse)
        if not reuse:
            ids = tuple(case.id for case in chosen)
            await asyncio.to_thread(self.storage.record_digest_cases, key, self.owner, ids)
        messages = self._render(chosen, slot)
        landed = await self._posted_parts(key) if takeover else {}
        message_ts: list[str] = []
        for part, message in enumerate(messages, start=1):
            if part in landed:
                message_ts.append(landed[part])
                continue
            ts = await self._post(key, part, len(messages), message)
            if ts is None:
                return DigestOutcome(key, "lost", tuple(message_ts))
            message_ts.append(ts)
        skipped = sum(1 for part in landed if part <= len(messages))
        return await self._complete(key, tuple(message_ts), skipped)

    async def _complete(self, key: str, message_ts: tuple[str, ...], skipped: int) -> DigestOutcome:
        done = await asyncio.to_thread(self.storage.complete_digest, key, self.owner, message_ts, self.clock())
        if not done:
            log.error("digest %s: claim lost before completion (posted %s)", key, message_ts)
            return DigestOutcome(key, "lost", message_ts, skipped)
        log.info("digest %s done: %d message(s), %d already posted", key, len(message_ts), skipped)
        return DigestOutcome(key, "posted" if message_ts else "empty", message_ts, skipped)

    async def _choose(self, slot: datetime, entry: DigestEntry | None, reuse: bool) -> list[Case]:
        library = self.cases()
        if reuse and entry is not None:
            # A takeover re-renders exactly what the first owner chose, so part numbers line up.
            by_id = {case.id: case for case in library}
            missing = [case_id for case_id in entry.case_ids if case_id not in by_id]
            if missing:
                log.warning("digest %s: cases no longer in the library: %s", entry.period_key, missing)
            return self._whole([by_id[case_id] for case_id in entry.case_ids if case_id in by_id])
        digested = await asyncio.to_thread(self.storage.digested_case_ids)
        own = set(entry.case_ids) if entry is not None else set()
        return self._whole(select_new_cases(library, digested - own, slot, self.params.lookback_days))

    def _whole(self, chosen: Sequence[Reviewed]) -> list[Case]:
        """The chosen cases in full (read through ``lookup`` when ``cases`` gave summaries)."""
        whole: list[Case] = []
        for item in chosen:
            case = item if isinstance(item, Case) else (self.lookup(item.id) if self.lookup else None)
            if case is not None:
                whole.append(case)
        return whole

    def _render(self, chosen: Sequence[Case], slot: datetime) -> list[DigestMessage]:
        start = previous_slot(self.params.cron, self.params.timezone, slot)
        # The period is fixed, so a takeover renders the same node section: it is one more part, posted once.
        repeated = tuple(self.nodes(start, slot)) if self.nodes is not None else ()
        plan = DigestPlan(start, slot, tuple(chosen), due=True, nodes=repeated)
        return plan.messages(self.params.lang_order, self.params.post_empty)

    # ----------------------------------------------------------------------------------------------
    # Slack calls

    async def _post(self, key: str, part: int, parts: int, message: DigestMessage) -> str | None:
        """Post one part with retries; its ts, or None when the claim was lost. Raises DigestError."""
        policy = self.params.retry
        for failure in range(policy.attempts):
            renewed = await asyncio.to_thread(
                self.storage.renew_digest, key, self.owner, self.clock(), self.params.lease_seconds
            )
            if not renewed:
                log.error("digest %s: claim lost before part %d", key, part)
                return None
            try:
                response = await self.client.chat_postMessage(
                    channel=self.channel,
                    text=message.text,
                    blocks=message.blocks,
                    metadata={
                        "event_type": EVENT_TYPE,
                        "event_payload": {"period": key, "part": part, "parts": parts},
                    },
                    unfurl_links=False,
                    unfurl_media=False,
                )
                return str(response["ts"])
            except (SlackApiError, aiohttp.ClientError, TimeoutError) as error:
                delay, ambiguous = self._classify(error, failure)
                if failure + 1 >= policy.attempts:
                    raise DigestError(f"digest {key} part {part}: giving up after {policy.attempts} tries") from error
                log.warning("digest %s part %d failed (%s); retrying in %.1fs", key, part, error, delay)
                await self._sleep(delay)
                if ambiguous:
                    # The failed request may still have been posted: look before posting again.
                    landed = await self._posted_parts(key)
                    if part in landed:
                        return landed[part]
        raise DigestError(f"digest {key} part {part}: no attempts configured")

    def _classify(self, error: Exception, failure: int) -> tuple[float, bool]:
        """(seconds to wait, whether the request may have been processed); raises DigestError when the
        error is not worth retrying."""
        backoff = self.params.retry.delay(failure)
        if not isinstance(error, SlackApiError):
            return backoff, True
        status = error.response.status_code
        if status == 429:
            retry_after = error.response.headers.get("Retry-After") or error.response.headers.get("retry-after")
            try:
                return max(float(retry_after), 0.0) if retry_after else backoff, False
            except ValueError:
                return backoff, False
        if status >= 500:
            return backoff, True
        raise DigestError(f"Slack refused the digest: {error.response.get('error')}") from error

    async def _posted_parts(self, key: str) -> dict[int, str]:
        """Parts of period ``key`` already in the channel's recent history: part number -> ts."""
        found: dict[int, str] = {}
        cursor: str | None = None
        for _ in range(self.params.history_pages):
            page = await self._history_page(cursor)
            for message in page.get("messages") or []:
                metadata: dict[str, Any] = message.get("metadata") or {}
                payload: dict[str, Any] = metadata.get("event_payload") or {}
                if metadata.get("event_type") == EVENT_TYPE and payload.get("period") == key:
                    found.setdefault(int(payload.get("part", 0)), str(message.get("ts")))
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not page.get("has_more") or not cursor:
                break
        return found

    async def _history_page(self, cursor: str | None) -> dict[str, Any]:
        policy = self.params.retry
        for failure in range(policy.attempts):
            try:
                response = await self.client.conversations_history(
                    channel=self.channel,
                    limit=self.params.history_limit,
                    include_all_metadata=True,
                    cursor=cursor,
                )
                data: dict[str, Any] = dict(response.data) if isinstance(response.data, dict) else {}
                return data
            except (SlackApiError, aiohttp.ClientError, TimeoutError) as error:
                delay, _ = self._classify(error, failure)
                if failure + 1 >= policy.attempts:
                    raise DigestError("cannot read the digest channel's history") from error
                await self._sleep(delay)
        raise DigestError("no attempts configured")
