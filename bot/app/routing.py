"""What an ``/incident`` text asks for. Pure: shared by the command entry point and the buttons."""

from __future__ import annotations

from bot.model.ids import canonical_id

# The words after /incident that name a command (deploy/slack-manifest.yaml's usage_hint lists each).
VERBS = frozenset({"search", "similar", "lang", "auto", "digest", "review", "forget", "topics", "topic", "nodes"})


def route_command(body: str) -> tuple[str, str]:
    """What ``/incident <body>`` asks for: (verb, the rest). Verbs: list (empty), help, search,
    similar, lang, auto, digest, id (a case id alone), paste (anything else is matched as a log)."""
    if not body:
        return "list", ""
    first, _, rest = body.partition(" ")
    verb = "" if "\n" in first else first.lower()
    if verb in {"help", "-h", "--help", "도움말"}:
        return "help", rest
    if verb in VERBS:
        return verb, rest
    if "\n" not in body and len(body) <= 24 and canonical_id(body):
        return "id", ""
    return "paste", body
