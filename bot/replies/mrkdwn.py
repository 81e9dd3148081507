"""Pure helpers for Slack mrkdwn: escaping the three control characters, links, and safe truncation.

Slack decodes only ``&amp;``, ``&lt;`` and ``&gt;`` (slack-platform.md §6); everything else is literal.
"""

from __future__ import annotations

ELLIPSIS = "…"
# The longest entity we emit is "&amp;" (5 chars); an "&" this close to a cut may start one.
_ENTITY_MAX = 5


def escape_mrkdwn(text: str) -> str:
    """Make ``text`` inert in mrkdwn: ``&`` first, then ``<`` and ``>``. Mentions like ``<!channel>``
    become literal text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape_mrkdwn(text: str) -> str:
    """Decode the three entities Slack uses in incoming text (``&amp;`` last, so it never double-decodes)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def link(url: str, label: str) -> str:
    """A mrkdwn link ``<url|label>`` with an escaped label; plain escaped label when ``url`` is not http(s).

    ``|`` and the control characters in the URL are percent-encoded so they cannot end the link early.
    """
    if not url.startswith(("https://", "http://")):
        return escape_mrkdwn(label)
    safe_url = url.replace("&", "%26").replace("<", "%3C").replace(">", "%3E").replace("|", "%7C")
    safe_label = escape_mrkdwn(label).replace("|", "¦")
    return f"<{safe_url}|{safe_label}>"


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in "…" when cut.

    Works on already-escaped mrkdwn: never cuts inside an entity (``&amp;``) or an open ``<…>`` link or
    mention, and prefers a word boundary near the cut. Raises ValueError when ``limit`` < 1.
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    amp = cut.rfind("&", max(0, len(cut) - _ENTITY_MAX + 1))
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    opened = cut.rfind("<")
    if opened != -1 and ">" not in cut[opened:]:
        cut = cut[:opened]
    space = cut.rfind(" ")
    if space >= len(cut) - 20 and space > len(cut) // 2:
        cut = cut[:space]
    return cut.rstrip() + ELLIPSIS


def fallback(text: str, limit: int = 3000) -> str:
    """A message's top-level ``text`` (Slack renders it as mrkdwn in notifications and where blocks are
    not shown): ``text`` on one line, escaped, cut at a safe boundary. Every reply's ``text`` is built
    with this, so nothing a user typed can ping anyone or become a link there."""
    return truncate(escape_mrkdwn(" ".join(text.split())), limit)
