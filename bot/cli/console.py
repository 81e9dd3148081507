"""The local console: what you type goes through the same service entry points as Slack.

Like errbot's text backend: ``/incident IL-0427`` runs a command, any other text is a paste (ended by an
empty line) matched as an explicit request, ``:json`` toggles printing the Block Kit that Slack would get.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from bot.app.service import IncidentService
from bot.model.case import Lang
from bot.model.results import Reply

BANNER = """\
incident-bot console: {count} cases loaded from {cases}.
Type /incident help, /incident IL-0427, or paste a log and end it with an empty line.
:json toggles the Block Kit view, :lang en|ko sets the language order, :quit leaves.\
"""

CONSOLE_USER = "console"


class Console:
    def __init__(self, service: IncidentService, write: Callable[[str], None] = print) -> None:
        self.service = service
        self.write = write
        self.show_json = False
        self.langs: tuple[Lang, Lang] = ("en", "ko")

    def run(self, lines: Iterable[str]) -> None:
        """Consume input lines until they end or ``:quit``; never raises on bad input."""
        buffer: list[str] = []
        for raw in lines:
            line = raw.rstrip("\n")
            if buffer:
                if line.strip():
                    buffer.append(line)
                    continue
                self._answer("\n".join(buffer))
                buffer = []
                continue
            stripped = line.strip()
            if not stripped:
                continue
            if stripped in {":quit", ":q", "quit", "exit"}:
                return
            if stripped == ":json":
                self.show_json = not self.show_json
                self.write(f"Block Kit view {'on' if self.show_json else 'off'}.")
            elif stripped.startswith(":lang"):
                self._set_lang(stripped.removeprefix(":lang").strip())
            elif stripped.startswith("/incident"):
                self._answer(stripped.removeprefix("/incident"), command=True)
            else:
                buffer.append(line)
        if buffer:
            self._answer("\n".join(buffer))

    def _set_lang(self, value: str) -> None:
        if value == "ko":
            self.langs = ("ko", "en")
        elif value == "en":
            self.langs = ("en", "ko")
        else:
            self.write("Usage: :lang en|ko")
            return
        self.write(f"Language order: {', '.join(self.langs)}.")

    def _answer(self, text: str, *, command: bool = False) -> None:
        if command:
            reply = self.service.command(text, user_id=CONSOLE_USER, channel_id="console", langs=self.langs)
        else:
            # Typed text is not Slack-encoded: "&lt;" in a console paste is literal.
            result = self.service.match(text, slack_encoded=False)
            reply = self.service.render_match(result, self.langs, explicit=True)
        self._print(reply)

    def _print(self, reply: Reply) -> None:
        self.write(reply.plain)
        if self.show_json:
            self.write(json.dumps({"text": reply.text, "blocks": reply.blocks}, ensure_ascii=False, indent=2))
        self.write("")
