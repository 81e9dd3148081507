"""The local console: what you type goes through the same service entry points as Slack.

Like errbot's text backend: ``/incident IL-0427`` runs a command; any other text starts a paste, which
runs until a line holding only ``.`` (or the end of input), blank lines and all, and gets one answer.
``:json`` toggles printing the message exactly as Slack would get it, buttons included.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable

from bot.app.feedback import FeedbackService
from bot.app.service import HELP_TEXT, IncidentService
from bot.model.case import Lang
from bot.model.results import MatchResult, Reply

END = "."
BANNER = """\
incident-bot console: {count} cases loaded from {cases}.
Type /incident IL-0427, or paste a log and end it with a line holding only "." (or Ctrl-D). :help lists
the console's commands.\
"""
PROMPT = "incident> "
PASTE_PROMPT = "    ...> "
EMPTY_LINE = 'Nothing to match: paste a log and end it with a line holding only ".", or type :help.'

CONSOLE_HELP = """\
Console commands:
:help                this help
:lang en|ko|both     the same as /incident lang (saved for the console user)
:json                show each message exactly as Slack would get it (blocks and buttons), or stop
:draft TITLE | SUMMARY   start a case draft from the last paste (its error lines become the proposed
                     signatures); then `incident-bot cases draft export ID` and `cases review`
:review ID [note]    record a review of a case as the console user (also /incident review ID)
:quit                leave (also Ctrl-D)

A paste is every line up to one holding only "." (or the end of input), blank lines included.

Everything /incident does in Slack works here:
"""

CONSOLE_USER = "console"
CONSOLE_CHANNEL = "console"
_QUIT = frozenset({":quit", ":q", "quit", "exit"})


class _Paste:
    """The lines of one paste, bounded: past ``limit`` characters the middle is dropped (the matcher reads
    a log by its head and tail anyway) and counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head: list[str] = []
        self.tail: deque[str] = deque()
        self.head_chars = self.tail_chars = self.skipped = 0

    def __bool__(self) -> bool:
        return bool(self.head or self.tail)  # a first line longer than half the limit goes to the tail

    def add(self, line: str) -> None:
        if self.head_chars + len(line) <= self.limit // 2 and not self.tail:
            self.head.append(line)
            self.head_chars += len(line) + 1
            return
        self.tail.append(line)
        self.tail_chars += len(line) + 1
        while self.tail_chars > self.limit // 2 and len(self.tail) > 1:
            self.tail_chars -= len(self.tail.popleft()) + 1
            self.skipped += 1

    def text(self) -> str:
        middle = [f"[... {self.skipped} lines not kept ...]"] if self.skipped else []
        return "\n".join([*self.head, *middle, *self.tail])


class Console:
    def __init__(
        self,
        service: IncidentService,
        write: Callable[[str], None] = print,
        *,
        interactive: bool = False,
        paste_limit: int = 8 << 20,
    ) -> None:
        """``interactive``: stdin is a terminal (an empty line gets a hint; the caller shows :attr:`prompt`).
        ``paste_limit``: the characters one paste keeps (its head and tail)."""
        self.service = service
        self.feedback = FeedbackService(service)  # buttons as Slack gets them; the console takes no clicks
        self.write = write
        self.interactive = interactive
        self.show_json = False
        self.last: MatchResult | None = None
        self._paste_limit = paste_limit
        self._paste = _Paste(paste_limit)

    @property
    def prompt(self) -> str:
        """What a terminal shows before the next line: a paste's continuation, or the console's prompt."""
        return PASTE_PROMPT if self._paste else PROMPT

    def run(self, lines: Iterable[str]) -> None:
        """Consume input lines until they end or ``:quit``; never raises on bad input."""
        for raw in lines:
            if not self.feed(raw.rstrip("\r\n")):
                return
        self._end_paste()

    def feed(self, line: str) -> bool:
        """One line of input; False after ``:quit``."""
        stripped = line.strip()
        if self._paste:
            if stripped == END:
                self._end_paste()
            elif stripped in _QUIT:
                self._end_paste()
                return False
            else:
                self._paste.add(line)
            return True
        if not stripped or stripped == END:
            if self.interactive:
                self.write(EMPTY_LINE)
        elif stripped in _QUIT:
            return False
        elif stripped.startswith(":"):
            self._console_command(stripped)
        elif stripped == "/incident" or stripped.startswith("/incident "):
            self._answer(stripped.removeprefix("/incident"), command=True)
        else:
            self._paste.add(line)
        return True

    @property
    def langs(self) -> tuple[Lang, ...]:
        """The console user's saved preference, as ``/incident lang`` sets it (the console has no locale)."""
        return self.service.langs_for_user(CONSOLE_USER)

    def _end_paste(self) -> None:
        if self._paste:
            text, self._paste = self._paste.text(), _Paste(self._paste_limit)
            self._answer(text)

    def _console_command(self, text: str) -> None:
        verb, _, rest = text.partition(" ")
        if verb == ":json":
            self.show_json = not self.show_json
            self.write(f"Slack message view {'on' if self.show_json else 'off'}.")
        elif verb == ":lang":
            self._answer(f"lang {rest.strip()}", command=True)
        elif verb == ":draft":
            self._draft(rest)
        elif verb == ":review":
            self._answer(f"review {rest.strip()}", command=True)
        elif verb in {":help", ":h", ":?"}:
            self.write(CONSOLE_HELP + HELP_TEXT + "\n")
        else:
            self.write(f"Unknown console command {verb[:40]}; :help lists them.")

    def _answer(self, text: str, *, command: bool = False) -> None:
        langs = self.langs
        if command:
            # The console user runs the bot on their own machine: they may record reviews.
            reply = self.service.command(
                text, user_id=CONSOLE_USER, channel_id=CONSOLE_CHANNEL, langs=langs, reviewer=True
            )
        else:
            # Typed text is not Slack-encoded: "&lt;" in a console paste is literal.
            result = self.service.match(text, slack_encoded=False)
            self.last = result
            reply = self.service.render_match(result, langs, explicit=True)
            reply = self.feedback.with_match_buttons(reply, result, langs)
        self._print(reply)

    def _draft(self, rest: str) -> None:
        """A draft from the last paste: ``:draft title | summary``."""
        if self.last is None:
            self.write('Paste a log first (end it with a line holding only "."), then :draft TITLE | SUMMARY.')
            return
        lines = self.service.examples.draft_lines(self.last)
        if not lines:
            self.write(
                "No draft can be proposed: the last paste has no error line that could become a signature "
                "(paste the lines that show the failure)."
            )
            return
        title, _, summary = rest.partition("|")
        fields = self.service.drafts.from_result(self.last, lines, title.strip(), summary.strip())
        outcome = self.service.drafts.submit(fields, CONSOLE_USER, CONSOLE_CHANNEL, "", self.service.now())
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
            # chat.postMessage's arguments as the Slack handlers send them: values sealed to where shown.
            sealed = self.feedback.seal(reply, CONSOLE_CHANNEL, None)
            payload = {
                "channel": CONSOLE_CHANNEL,
                "text": sealed.text,
                "blocks": sealed.blocks,
                "unfurl_links": False,
                "unfurl_media": False,
            }
            self.write(json.dumps(payload, ensure_ascii=False, indent=2))
        self.write("")
