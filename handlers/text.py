"""The visible text of a Slack message, as one Slack-encoded string: its ``text``, its ``rich_text`` blocks
(code blocks included) when it has no ``text``, its other blocks, and the messages it shares or forwards
(``attachments`` with ``is_share`` or ``is_msg_unfurl``, their ``message_blocks``). Each piece is read
once: one that is already contained in what was read adds nothing. Link previews of other sites are not
the user's paste and are left out. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bot.replies.mrkdwn import escape_mrkdwn, unescape_mrkdwn

_MAX_PIECES = 50  # attachments and blocks read from one message
_MAX_DEPTH = 6


def _inline(element: Mapping[str, Any]) -> str:
    """One rich-text element in Slack's message encoding (``<@U1>``, ``<url|label>``, ``&lt;``)."""
    kind = element.get("type")
    if kind == "text":
        return escape_mrkdwn(str(element.get("text") or ""))
    if kind == "link":
        url, label = str(element.get("url") or ""), str(element.get("text") or "")
        return f"<{url}|{escape_mrkdwn(label)}>" if label else f"<{url}>"
    if kind == "user":
        return f"<@{element.get('user_id', '')}>"
    if kind == "usergroup":
        return f"<!subteam^{element.get('usergroup_id', '')}>"
    if kind == "channel":
        return f"<#{element.get('channel_id', '')}>"
    if kind == "broadcast":
        return f"<!{element.get('range', 'here')}>"
    if kind == "emoji":
        return f":{element.get('name', '')}:"
    return escape_mrkdwn(str(element.get("text") or ""))


def _rich(element: Mapping[str, Any], depth: int = 0) -> str:
    if depth > _MAX_DEPTH:
        return ""
    kind = element.get("type")
    children = [e for e in element.get("elements") or [] if isinstance(e, dict)][:500]
    if kind in {"rich_text_section", "rich_text_preformatted", "rich_text_quote"}:
        return "".join(_inline(child) for child in children)
    if kind in {"rich_text", "rich_text_list"}:
        return "\n".join(_rich(child, depth + 1) for child in children)
    return _inline(element)


def blocks_text(blocks: Iterable[Any], rich: bool = True) -> str:
    """The text a reader sees in ``blocks``: rich text (unless ``rich`` is False), section and context
    text."""
    lines: list[str] = []
    for block in list(blocks)[:_MAX_PIECES]:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "rich_text":
            if rich:
                lines.append(_rich(block))
        elif isinstance(block.get("text"), dict):
            lines.append(str(block["text"].get("text") or ""))
        for element in block.get("elements") or [] if block.get("type") == "context" else []:
            if isinstance(element, dict) and element.get("type") in {"mrkdwn", "plain_text"}:
                lines.append(str(element.get("text") or ""))
    return "\n".join(line for line in lines if line.strip())


def _attachment_pieces(attachment: Mapping[str, Any]) -> list[str]:
    if not (attachment.get("is_share") or attachment.get("is_msg_unfurl") or attachment.get("message_blocks")):
        return []  # a preview of a link to another site: not what the user pasted
    pieces = [str(attachment.get("text") or "")]
    for shared in (attachment.get("message_blocks") or [])[:_MAX_PIECES]:
        message = shared.get("message") if isinstance(shared, dict) else None
        if isinstance(message, dict):
            pieces.append(blocks_text(message.get("blocks") or []))
        elif isinstance(shared, dict):
            pieces.append(blocks_text([shared]))
    pieces.append(blocks_text(attachment.get("blocks") or []))
    return pieces


def _flat(text: str) -> str:
    return " ".join(unescape_mrkdwn(text).split())


def visible_text(message: Mapping[str, Any]) -> str:
    """Everything a reader sees in ``message``, Slack-encoded, each piece once, in reading order. A user's
    message carries its words twice, as ``text`` and as ``rich_text`` blocks (formatting makes the two
    differ: a code fence, inline code, a list), so its rich text is read only when ``text`` is empty;
    other blocks (an integration's sections under a fallback ``text``) are read as well."""
    text = str(message.get("text") or "")
    pieces = [text, blocks_text(message.get("blocks") or [], rich=not text.strip())]
    for attachment in (message.get("attachments") or [])[:_MAX_PIECES]:
        if isinstance(attachment, dict):
            pieces += _attachment_pieces(attachment)
    kept: list[str] = []
    seen = ""
    for piece in pieces:
        flat = _flat(piece)
        if flat and flat not in seen:
            kept.append(piece.strip())
            seen += "\n" + flat
    return "\n".join(kept)
