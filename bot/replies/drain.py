"""Pure: the Drain and Resume buttons, their forms and the thread's record of what was done. Every value a
person or the scheduler wrote is escaped; button values are sealed by the caller."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from bot.model.nodestate import ActionRecord
from bot.replies.mrkdwn import escape_mrkdwn

ACTION_DRAIN = "drain_node"
ACTION_APPROVE = "approve_drain"
ACTION_RESUME = "resume_node"
DRAIN_VIEW = "drain_view"
RESUME_VIEW = "resume_view"
_WHAT_DRAIN_DOES = (
    "Draining stops Slurm from starting new jobs on the node. Jobs running there keep running until they "
    "end; it is `drained` once none is left. It does not reset the GPU or reboot anything."
)


def _button(text: str, action_id: str, value: str, style: str | None = None) -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": text[:75]},
        "action_id": action_id,
        "value": value,
    }
    if style:
        button["style"] = style
    return button


def _modal(callback_id: str, title: str, submit: str, meta: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": callback_id,
        "private_metadata": meta,
        "title": {"type": "plain_text", "text": title},
        "submit": {"type": "plain_text", "text": submit},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": blocks,
    }


def drain_actions(nodes: list[tuple[str, str]]) -> dict[str, Any]:
    """An actions block with a Drain button per (node, sealed value)."""
    return {
        "type": "actions",
        "block_id": "drain",
        "elements": [_button(f"Drain {node}", ACTION_DRAIN, value, "danger") for node, value in nodes[:5]],
    }


def drain_view(node: str, reason: str, command: str, meta: str, limited: str = "") -> dict[str, Any]:
    """The confirmation form: the node, a reason to edit, the exact command, what draining does."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*Drain {escape_mrkdwn(node)}*"}},
        {
            "type": "input",
            "block_id": "reason",
            "label": {"type": "plain_text", "text": "Reason (stored by Slurm, shown by sinfo -R)"},
            "element": {
                "type": "plain_text_input",
                "action_id": "reason",
                "initial_value": reason[:200],
                "max_length": 200,
            },
        },
        {"type": "section", "text": {"type": "mrkdwn", "text": f"Runs:\n```{escape_mrkdwn(command)}```"}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": _WHAT_DRAIN_DOES}]},
    ]
    if limited:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": escape_mrkdwn(limited)}]})
    return _modal(DRAIN_VIEW, "Drain a node", "Drain", meta, blocks)


def resume_view(node: str, command: str, meta: str, made_by_bot: bool) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": f"*Resume {escape_mrkdwn(node)}* after the runbook's verify step passed.\n"
                f"Runs:\n```{escape_mrkdwn(command)}```",
            },
        }
    ]
    if not made_by_bot:
        blocks.append(
            {
                "type": "input",
                "block_id": "override",
                "optional": True,
                "label": {"type": "plain_text", "text": "Someone else drained it"},
                "element": {
                    "type": "checkboxes",
                    "action_id": "override",
                    "options": [{"text": {"type": "plain_text", "text": "Override an admin's drain"}, "value": "yes"}],
                },
            }
        )
    blocks.append(
        {
            "type": "input",
            "block_id": "note",
            "optional": made_by_bot,
            "label": {"type": "plain_text", "text": "Note (what was verified)"},
            "element": {"type": "plain_text_input", "action_id": "note", "max_length": 200},
        }
    )
    return _modal(RESUME_VIEW, "Resume a node", "Resume", meta, blocks)


def meta(**values: str) -> str:
    return json.dumps(values, separators=(",", ":"))


def record_blocks(said_md: str, buttons: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The thread's record: ``said_md`` is mrkdwn whose user-written parts the caller escaped."""
    blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": said_md[:2900]}}]
    if buttons:
        blocks.append({"type": "actions", "elements": buttons})
    return blocks


def approve_button(node: str, value: str) -> dict[str, Any]:
    return _button(f"Approve drain of {node}", ACTION_APPROVE, value, "danger")


def resume_button(node: str, value: str) -> dict[str, Any]:
    return _button(f"Resume {node}", ACTION_RESUME, value)


_VERB = {"drain": "drained", "resume": "resumed"}
SLACK_ID = re.compile(r"^[A-Z][A-Z0-9]{1,20}$")  # a Slack user or group id: safe to write as a mention


def action_lines(actions: Sequence[ActionRecord], limit: int = 10) -> list[tuple[str, str]]:
    """``gpu-a17: drained from Slack by @U1 at 2026-12-03 03:12 UTC (reason: …)`` for the actions that ran
    (done), newest first, as (mrkdwn, plain): for ``/incident nodes``, App Home and the digest."""
    lines = []
    for action in [a for a in actions if a.status == "done"][:limit]:
        verb = _VERB.get(action.kind, action.kind)
        when = f"{action.created_at:%Y-%m-%d %H:%M} UTC"
        who_md = f"<@{action.user_id}>" if SLACK_ID.match(action.user_id) else escape_mrkdwn(action.user_id)
        approved = f", approved by {action.approved_by}" if action.approved_by else ""
        reason = f" (reason: {action.reason})" if action.reason else ""
        plain = f"{action.node}: {verb} from Slack by {action.user_id} at {when}{approved}{reason}"
        md = escape_mrkdwn(f"{action.node}: {verb} from Slack by ") + who_md
        md += escape_mrkdwn(f" at {when}{approved}{reason}")
        lines.append((md, plain))
    return lines
