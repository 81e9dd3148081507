"""Case ids: the one spelling of an id, whatever the user typed."""

from __future__ import annotations

import re

_ID_RE = re.compile(r"^\s*([A-Za-z]{1,10})[-_ ]?0{0,8}(\d{1,8})\s*$")


def canonical_id(raw: str) -> str | None:
    """``il-427``, ``IL-427`` and ``IL-0427`` all give ``IL-0427``; None when it is not an id at all."""
    found = _ID_RE.match(raw)
    if not found:
        return None
    prefix, number = found.groups()
    return f"{prefix.upper()}-{int(number):04d}"
