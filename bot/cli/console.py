"""The local console: what you type goes through the same service entry points as Slack.

Like errbot's text backend: ``/incident IL-0427`` runs a command, any other text is a paste (ended by an
empty line) matched as an explicit request, ``:json`` toggles printing the Block Kit that Slack would get.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from bot.app.service import HELP_TEXT, IncidentService
from bot.model.case import Lang
from bot.model.results import MatchResult, Reply

BANNER = """\
incident-bot console: {count} cases loaded from {cases}.
Type /incident IL-0427, paste a log and end it with an empty line, or :help.\
"""

CONSOLE_HELP = """\
Console commands:
:help                this help
:lang en|ko|both     the same as /incident lang (saved for the console user)
:json                show the Block Kit that Slack would get, or stop showing it
:draft TITLE | SUMMARY   start a case draft from the last paste (its error lines become the proposed
                     signatures); then `incident-bot cases draft export ID` and `cases review`
:review ID [note]    record a review of a case as the console user (as /incident review does)
:quit                leave (also Ctrl-D)

Everything /incident does in Slack works here:
"""

CONSOLE_USER = "console"


class Console:
    def __init__(self, service: IncidentService, write: Callable[[str], None] = print) -> None:
        self.service = service
        self.write = write
        self.show_json = False
        self.last: MatchResult | None = None

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
            if stripped.startswith(":"):
                self._console_command(stripped)
            elif stripped == "/incident" or stripped.startswith("/incident "):
                self._answer(stripped.removeprefix("/incident"), command=True)
            else:
                buffer.append(line)
        if buffer:
            self._answer("\n".join(buffer))

    @property
    def langs(self) -> tuple[Lang, Lang]:
        """The console user's saved preference, as ``/incident lang`` sets it (the console has no locale)."""
        return self.service.langs_for_user(CONSOLE_USER)

    def _console_command(self, text: str) -> None:
        verb, _, rest = text.partition(" ")
        if verb == ":json":
            self.show_json = not self.show_json
            self.write(f"Block Kit view {'on' if self.show_json else 'off'}.")
        elif verb == ":lang":
            self._answer(f"lang {rest.strip()}", command=True)
        elif verb == ":draft":
            self._draft(rest)
        elif verb == ":review":
            raw, _, note = rest.strip().partition(" ")
            self._print(self.service.review(raw, CONSOLE_USER, note, self.langs))
        elif verb in {":help", ":h", ":?"}:
            self.write(CONSOLE_HELP + HELP_TEXT + "\n")
        else:
            self.write(f"Unknown console command {verb[:40]}; :help lists them.")

    def _answer(self, text: str, *, command: bool = False) -> None:
        if command:
            reply = self.service.command(text, user_id=CONSOLE_USER, channel_id="console", langs=self.langs)
        else:
            # Typed text is not Slack-encoded: "&lt;" in a console paste is literal.
            result = self.service.match(text, slack_encoded=False)
            self.last = result
            reply = self.service.render_match(result, self.langs, explicit=True)
        self._print(reply)

    def _draft(self, rest: str) -> None:
        """A draft from the last paste: ``:draft title | summary``."""
        if self.last is None:
            self.write("Paste a log first (end it with an empty line), then :draft TITLE | SUMMARY.")
            return
        title, _, summary = rest.partition("|")
        lines = self.service.examples.lines_of(self.last)
        fields = self.service.drafts.from_result(self.last, lines, title.strip(), summary.strip())
        outcome = self.service.drafts.submit(fields, CONSOLE_USER, "console", "", self.service.now())
        if outcome.draft_id is None:
            self.write("Not saved: " + "; ".join(f"{p.field}: {p.message}" for p in outcome.problems))
            return
        proposed = fields["signatures"].splitlines()
        self.write(f"Saved draft D-{outcome.draft_id} with {len(proposed)} proposed signature(s):")
        for line in proposed:
            self.write(f"  {line}")
        self.write(f"Export it: incident-bot cases draft export {outcome.draft_id}\n")

    def _print(self, reply: Reply) -> None:
        self.write(reply.plain)
        if self.show_json:
            self.write(json.dumps({"text": reply.text, "blocks": reply.blocks}, ensure_ascii=False, indent=2))
        self.write("")
