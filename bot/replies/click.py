"""A button click as the bot reads it from a ``block_actions`` payload. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Click:
    """One ``block_actions`` click, read from the payload: who, where, which button, and whether the
    clicked message is ephemeral (then ``message_ts`` is Slack's, unknown to the reply log)."""

    action_id: str
    value: str
    user_id: str
    channel_id: str
    message_ts: str
    ephemeral: bool


def _dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def click_from_body(body: Mapping[str, Any]) -> Click:
    """The first action of a ``block_actions`` payload. Missing fields become "" (never raises)."""
    actions = body.get("actions")
    action = _dict(actions[0]) if isinstance(actions, list) and actions else {}
    container = _dict(body.get("container"))
    user = _dict(body.get("user"))
    channel = _dict(body.get("channel"))
    message = _dict(body.get("message"))
    return Click(
        action_id=str(action.get("action_id") or ""),
        value=str(action.get("value") or ""),
        user_id=str(user.get("id") or ""),
        channel_id=str(channel.get("id") or container.get("channel_id") or ""),
        message_ts=str(container.get("message_ts") or message.get("ts") or ""),
        ephemeral=bool(container.get("is_ephemeral")),
    )
