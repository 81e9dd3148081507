"""Button values bound to where they were shown. Pure.

A value is sealed with an HMAC of (channel, user, value) under the deployment's key: a private answer's
buttons are bound to the channel and the one user who saw it, a posted answer's to the channel alone. A
click whose value was copied into another channel, or replayed by another user, does not unseal.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

from bot.model.results import Reply

SEPARATOR = "~"
TAG_CHARS = 16  # base64 of 12 bytes of HMAC-SHA256
SEAL_CHARS = len(SEPARATOR) + TAG_CHARS
_EVERYONE = "*"


def derive_key(secret: str, purpose: str = "button values v1") -> bytes:
    """A key for ``purpose`` derived from a deployment secret (never the secret itself)."""
    return hmac.new(secret.encode("utf-8"), f"incident-bot {purpose}".encode(), hashlib.sha256).digest()


def _tag(key: bytes, channel: str, user: str | None, value: str) -> str:
    message = "\x1f".join((channel, user or _EVERYONE, value)).encode("utf-8", "surrogatepass")
    return base64.urlsafe_b64encode(hmac.new(key, message, hashlib.sha256).digest()[:12]).decode()


def seal(value: str, key: bytes, channel: str, user: str | None) -> str:
    """``value`` bound to ``channel`` and, when given, ``user``."""
    return f"{value}{SEPARATOR}{_tag(key, channel, user, value)}"


def unseal(sealed: str, key: bytes, channel: str, user: str) -> str | None:
    """The value when ``sealed`` was sealed for this channel and this user (or the whole channel); else
    None. Compares in constant time; never raises."""
    value, separator, tag = sealed.rpartition(SEPARATOR)
    if not separator or len(tag) != TAG_CHARS:
        return None
    for who in (user, None):
        if hmac.compare_digest(tag, _tag(key, channel, who, value)):
            return value
    return None


def _seal_elements(elements: Sequence[Any], key: bytes, channel: str, user: str | None) -> list[Any]:
    out = []
    for element in elements:
        if isinstance(element, dict) and element.get("type") == "button" and element.get("value"):
            element = {**element, "value": seal(str(element["value"]), key, channel, user)}
        out.append(element)
    return out


def seal_reply(reply: Reply, key: bytes, channel: str, user: str | None) -> Reply:
    """``reply`` with every button value sealed for ``channel`` (and ``user`` for a private answer)."""
    blocks = [
        {**block, "elements": _seal_elements(block.get("elements") or [], key, channel, user)}
        if block.get("type") == "actions"
        else block
        for block in reply.blocks
    ]
    return reply.model_copy(update={"blocks": blocks})
