"""The scheduler's view of the nodes a posted reply names, added to it afterwards: the reply goes out first,
then, within ``SCHEDULER_TIMEOUT_SECONDS`` (and a little for the thread hop), the message is updated with
one line per node, or "scheduler not reachable". Never raises into the handler, never delays the reply."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.services import Services
from bot.model.nodestate import Lookup
from bot.model.results import Reply
from bot.replies.drain import drain_actions
from bot.replies.nodestate import node_block

log = logging.getLogger(__name__)
MAX_PENDING = 64  # updates in flight at once; past that a reply keeps no node line (logged)
_pending: set[asyncio.Task[None]] = set()


def pending_updates() -> list[asyncio.Task[None]]:
    """Node-line updates not finished: shutdown waits for them (bounded)."""
    return [task for task in _pending if not task.done()]


def _start(work: Coroutine[Any, Any, None]) -> None:
    if len(_pending) >= MAX_PENDING:
        work.close()
        log.warning("node state: %d updates in flight, this reply keeps no node line", len(_pending))
        return
    task = asyncio.get_running_loop().create_task(work)
    _pending.add(task)
    task.add_done_callback(_pending.discard)


def follow(services: Services, client: AsyncWebClient, channel: str, ts: str, reply: Reply, thread: str = "") -> None:
    """Schedule the node line for the reply posted as ``ts`` in ``thread`` (nothing without a scheduler or
    hosts)."""
    if services.incident.node_states is None or not reply.hosts or not ts:
        return
    _start(_update(services, client, channel, ts, reply, thread or ts))


def _drains(services: Services, reply: Reply) -> bool:
    """Whether the reply's case has a runbook step that drains (and the bot may drain)."""
    if services.incident.drains is None or not reply.case_ids:
        return False
    case = services.incident.library.cases.get(reply.case_ids[0])
    return case is not None and any("state=drain" in (step.command or "") for step in case.runbook)


def drain_buttons(services: Services, reply: Reply, lookup: Lookup, channel: str, thread: str) -> dict[str, Any] | None:
    """A Drain button per named node the scheduler knows and that is not drained or down already."""
    if not _drains(services, reply) or lookup.error is not None:
        return None
    nodes = []
    for host in reply.hosts:
        state = lookup.states.get(host)
        if state is not None and state.state not in ("drained", "draining", "down"):
            value = services.feedback.seal_value(f"{host}|{reply.case_ids[0]}|{thread}", channel, None)
            nodes.append((host, value))
    return drain_actions(nodes) if nodes else None


async def _update(services: Services, client: AsyncWebClient, channel: str, ts: str, reply: Reply, thread: str) -> None:
    states = services.incident.node_states
    if states is None:
        return
    try:
        lookup = await asyncio.wait_for(services.pools.side(states.lookup, reply.hosts), states.timeout_s + 0.4)
    except TimeoutError:
        lookup = Lookup(error="timeout", source=states.scheduler.name)
    block, _ = node_block(reply.hosts, lookup, reply.langs or ["en"])
    buttons = drain_buttons(services, reply, lookup, channel, thread)
    try:
        blocks = [*reply.blocks, block, *([buttons] if buttons else [])]
        await client.chat_update(channel=channel, ts=ts, text=reply.text, blocks=blocks)
    except SlackApiError as failed:
        log.warning("node state: chat.update failed: %s", failed.response.get("error"))
    except Exception:  # the reply is already out; a failed addition must not surface
        log.warning("node state: chat.update failed", exc_info=True)
