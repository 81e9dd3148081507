"""Slurm host lists (``gpu-a[17-18,20],gpu-b01``) expanded, bounded. Pure."""

from __future__ import annotations

import re

_RANGE = re.compile(r"^(\d{1,9})(?:-(\d{1,9}))?$")
MAX_HOSTS = 10_000


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p]


def expand(hostlist: str, limit: int = MAX_HOSTS) -> list[str]:
    """The names a Slurm host list stands for, in order, at most ``limit``; a malformed range is kept as
    written (never an error: this reads the scheduler's output, not a user's)."""
    names: list[str] = []
    for part in _split_top(hostlist.strip()[:100_000]):
        found = re.fullmatch(r"([^\[\]]*)\[([^\[\]]{1,4000})\](.*)", part)
        if not found:
            names.append(part)
        else:
            prefix, ranges, suffix = found.groups()
            for piece in ranges.split(","):
                bounds = _RANGE.match(piece)
                if not bounds:
                    names.append(part)
                    break
                low, high = bounds.group(1), bounds.group(2) or bounds.group(1)
                width = len(low)
                for number in range(int(low), min(int(high), int(low) + limit) + 1):
                    names.append(f"{prefix}{number:0{width}d}{suffix}")
                    if len(names) >= limit:
                        return names
        if len(names) >= limit:
            return names[:limit]
    return names
