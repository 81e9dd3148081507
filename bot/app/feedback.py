"""Feedback, stats and App Home use cases: the buttons on match replies (``bot.replies.buttons`` builds and
parses their values), what their clicks do, the App Home view and ``incident-bot stats``.

``FeedbackService`` is composed over an ``IncidentService`` (``bot.app.services``) and uses its storage,
library snapshot and rendering.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Literal

from bot.app.clicked import clicked_reply
from bot.app.examples import is_direct_message
from bot.app.nodes import Answered, Where
from bot.app.routing import route_command
from bot.app.service import IncidentService
from bot.model.case import Case, Lang
from bot.model.results import Button, MatchResult, Reply
from bot.replies.buttons import (
    ButtonPayload,
    Click,
    match_buttons,
    other_lang,
    pick_value,
    rebuild_result,
    with_buttons,
)
from bot.replies.clicks import ClickAnswer, invalid_reply, note_reply, other_matches_reply, vote_reply
from bot.replies.drafts import ACTION_DRAFT, draft_value, words
from bot.replies.drain import action_lines
from bot.replies.home import HOME_LIST, CaseVotes, FeedbackSummary, build_home_view
from bot.replies.labels import label
from bot.replies.nodes import host_lines
from bot.replies.render import case_reply, message_reply
from bot.replies.seal import seal, seal_reply, unseal
from bot.storage.base import ReplyRecord, StorageError, Vote


class FeedbackService:
    """The interactive side of answers; ``incident`` does the matching, rendering and storage."""

    def __init__(self, incident: IncidentService, button_key: bytes | None = None) -> None:
        """``button_key`` seals button values (``bot.replies.seal``); replicas must share it, so the
        composition root derives it from a deployment secret. The default is random: one process only."""
        self.incident = incident
        self._key = button_key or secrets.token_bytes(32)

    def seal(self, reply: Reply, channel: str, user: str | None) -> Reply:
        """``reply`` with its button values bound to ``channel`` (and ``user``, for a private answer)."""
        return seal_reply(reply, self._key, channel, user)

    def seal_value(self, value: str, channel: str, user: str | None) -> str:
        """``value`` sealed to ``channel`` (and ``user``), like a button value (a modal's metadata)."""
        return seal(value, self._key, channel, user)

    def unseal(self, value: str, channel: str, user: str) -> str | None:
        """A clicked button's value when the click comes from where the button was shown; else None."""
        return unseal(value, self._key, channel, user)

    @staticmethod
    def is_paste(text: str) -> bool:
        """Whether ``command(text)`` would match ``text`` as a pasted log."""
        return route_command(text.strip())[0] == "paste"

    def with_match_buttons(
        self,
        reply: Reply,
        result: MatchResult,
        langs: Sequence[Lang],
        *,
        reply_id: int | None = None,
        share: bool = False,
    ) -> Reply:
        """``reply`` with Helpful / Not this case / Other matches / language buttons when it is a match
        reply (it names a best case); unchanged otherwise."""
        if reply.tier is None or result.best is None:
            # No case fits: offer to start one from this paste's error lines.
            suspects = result.suspects.summary if result.suspects is not None else ""
            return self._with_draft_button(reply, langs[0], self.incident.examples.draft_lines(result), suspects)
        lines = self.incident.examples.lines_of(result)  # what proved the answer: what a vote may keep
        paste = self.incident.examples.draft_lines(result)  # "Not this case" offers a draft of these
        buttons = match_buttons(result, langs, reply_id=reply_id, share=share, lines=lines, paste=paste)
        return with_buttons(reply, buttons)

    def render_interactive(
        self, result: MatchResult, langs: Sequence[Lang], *, explicit: bool, where: Where | None = None
    ) -> Reply:
        """``render_match`` with the buttons, for a reply that will be posted (and then logged with its
        ts by ``record_reply``: a click finds it by channel and message ts)."""
        reply = self.incident.render_match(result, langs, explicit=explicit, where=where)
        hosts = list(result.suspects.hosts) if result.suspects else []
        extra = {"hosts": hosts[:8], "langs": list(langs)}
        return self.with_match_buttons(reply, result, langs).model_copy(update=extra)

    def answer(
        self,
        text: str,
        *,
        user_id: str | None = None,
        channel_id: str | None = None,
        langs: Sequence[Lang] = ("en", "ko"),
        log_as: str | None = None,
        source: str = "command",
        share: bool = False,
        reviewer: bool = False,
        where: Where | None = None,
    ) -> tuple[Reply, int | None]:
        """``command(text)``, with the buttons when the answer is a match reply. Returns the reply and its
        reply-log id (None unless logged here).

        With ``log_as`` a match reply is logged before it is sent, under that key (the user for an
        ephemeral answer, so it does not count for a channel's noise window; the channel for a shared
        one) with no message ts, and its id goes into the buttons: for answers whose ts the bot never
        learns (``response_url``). Without it the caller logs the reply after posting."""
        if not self.is_paste(text):
            reply = self.incident.command(text, user_id=user_id, channel_id=channel_id, langs=langs, reviewer=reviewer)
            return reply, None
        self.incident.metrics.commands.labels(verb="paste").inc()
        result = self.incident.match(text.strip())
        reply = self.incident.render_match(result, langs, explicit=True, where=where)
        reply_id = None
        if log_as and reply.tier is not None:
            reply_id = self.incident.record_reply(log_as, "", "", reply, source)
        return self.with_match_buttons(reply, result, langs, reply_id=reply_id, share=share), reply_id

    def private_match_reply(
        self, result: MatchResult, langs: Sequence[Lang], user_id: str, source: str, where: Where | None = None
    ) -> tuple[Reply, int | None]:
        """An explicit match answer shown only to ``user_id`` (``response_url``): logged under the user
        first, its id in the buttons."""
        reply = self.incident.render_match(result, langs, explicit=True, where=where)
        reply_id = self.incident.record_reply(user_id, "", "", reply, source) if reply.tier is not None else None
        return self.with_match_buttons(reply, result, langs, reply_id=reply_id), reply_id

    def clicked_reply(self, click: Click, *, any_case: bool = False) -> tuple[ButtonPayload, ReplyRecord] | None:
        """The button value of ``click`` and the reply-log entry it belongs to (``bot.app.clicked``)."""
        return clicked_reply(click, self._key, self.incident.storage, any_case=any_case)

    def record_vote(self, click: Click, vote: Vote) -> Reply:
        """Store a Helpful / Not this case click (one vote per user per reply; a later click replaces
        it) and say so to the clicker. A value that is not ours, or does not fit, stores nothing."""
        found = self.clicked_reply(click)
        if found is None or not click.user_id:
            return invalid_reply()
        payload, record = found
        assert record.id is not None  # checked in clicked_reply
        channel = click.channel_id or record.channel
        storage, now = self.incident.storage, self.incident.now()
        storage.record_feedback(record.id, click.user_id, payload.case_id, vote, channel, record.tier, now)
        lang = payload.langs[0]
        if vote == "not_helpful":
            gone = self.incident.examples.withdraw(payload.case_id, payload.lines, click.user_id, record.id)
            self.incident.examples_changed()  # their lines went, or a rejection counts against others'
            notes = [label("examples.withdrawn", lang).format(case=payload.case_id)] if gone else []
            return self._with_draft_button(vote_reply(payload.case_id, vote, lang, notes), lang, payload.lines)
        return self._confirmed(payload, record, click, vote)

    @staticmethod
    def _with_draft_button(reply: Reply, lang: Lang, lines: Sequence[str], suspects: str = "") -> Reply:
        """``reply`` with "Start a case draft" when the paste has lines to propose."""
        if not lines:
            return reply
        button = Button(action_id=ACTION_DRAFT, text=words("button", lang), value=draft_value(lang, lines, suspects))
        return with_buttons(reply, [button])

    def _confirmed(
        self, payload: ButtonPayload, record: ReplyRecord, click: Click, vote: Literal["helpful", "picked"]
    ) -> Reply:
        """Store the clicked lines as an example of ``payload.case_id`` (not from a DM: there the reply
        offers "Save as an example" instead) and say what happened."""
        lang = payload.langs[0]
        assert record.id is not None  # a logged reply
        if is_direct_message(click.channel_id or record.channel):
            keep = pick_value(payload.case_id, lang, record.id, payload.lines) if payload.lines else None
            notes = [label("examples.dm", lang)] if keep else []
            return vote_reply(payload.case_id, vote, lang, notes, keep=keep)
        return vote_reply(payload.case_id, vote, lang, self._keep(payload, record, click))

    def _keep(self, payload: ButtonPayload, record: ReplyRecord, click: Click) -> list[str]:
        lang = payload.langs[0]
        assert record.id is not None
        if payload.case_id not in self.incident.library.cases:
            return []
        channel = click.channel_id or record.channel
        saved = self.incident.examples.confirm(payload.case_id, payload.lines, click.user_id, channel, record.id)
        if not saved:
            return [label("examples.none", lang)]
        self.incident.examples_changed()
        days = str(self.incident.examples.retention.days)
        return [label("examples.saved", lang).format(n=saved, case=payload.case_id, days=days)]

    def pick(self, click: Click) -> Reply:
        """ "It was …" in Other matches: a Helpful vote for that runner-up, and its example."""
        found = self.clicked_reply(click, any_case=True)
        if found is None or not click.user_id:
            return invalid_reply()
        payload, record = found
        assert record.id is not None
        channel = click.channel_id or record.channel
        now = self.incident.now()
        self.incident.storage.record_feedback(
            record.id, click.user_id, payload.case_id, "helpful", channel, record.tier, now
        )
        return self._confirmed(payload, record, click, "picked")

    def keep(self, click: Click) -> Reply:
        """ "Save as an example" (offered in a DM, where nothing is kept unasked)."""
        found = self.clicked_reply(click, any_case=True)
        if found is None or not click.user_id:
            return invalid_reply()
        payload, record = found
        notes = self._keep(payload, record, click)
        return note_reply(" ".join(notes) or label("examples.none", payload.langs[0]))

    def other_matches(self, click: Click) -> Reply:
        """The runner-ups of the clicked match reply (shown to the clicker only)."""
        found = self.clicked_reply(click)
        if found is None:
            return invalid_reply()
        payload, record = found
        return other_matches_reply(payload, self.incident.library.cases, record.id)

    def details(self, click: Click) -> Reply:
        """The whole clicked case (story, runbook with the paste's values filled, what was done then,
        lessons), for the clicker only."""
        found = self.clicked_reply(click)
        if found is None:
            return invalid_reply()
        payload = found[0]
        case = self.incident.get_case(payload.case_id)
        if case is None:
            return message_reply(label("details.none", payload.langs[0]))
        return case_reply(case, payload.langs, fills=dict(payload.fills))

    def switch_language(self, click: Click) -> ClickAnswer:
        """The clicked match reply again in the other language order, with its buttons (carrying the
        reply id, so they work on an ephemeral copy too). ``ok`` False: an explanation instead."""
        found = self.clicked_reply(click)
        result = rebuild_result(found[0], self.incident.library.cases) if found else None
        if found is None or result is None:
            return ClickAnswer(invalid_reply(), ok=False)
        payload, record = found
        langs = other_lang(payload.langs)
        answered = Answered(record.channel, record.thread_ts, record.created_at)
        reply = self.incident.render_match(result, langs, explicit=True, answered=answered)
        reply = self.with_match_buttons(reply, result, langs, reply_id=record.id, share=payload.share)
        return ClickAnswer(reply, ok=True, reply_id=record.id, share=payload.share)

    def feedback_summary(self, lang: Lang = "en") -> FeedbackSummary:
        """Votes per case with the case title in ``lang`` ("" for cases no longer in the library)."""
        cases = self.incident.library.cases
        rows = []
        for count in self.incident.storage.feedback_counts():
            case = cases.get(count.case_id)
            title = (case.title.get(lang) or case.title.get("en") or case.title.get("ko") or "") if case else ""
            rows.append(CaseVotes(count.case_id, title, count.helpful, count.not_helpful))
        return FeedbackSummary(tuple(rows))

    def most_matched(self, days: int = 30, limit: int = 50) -> list[tuple[Case, int]]:
        """Cases by how many replies named them best in the last ``days`` days, most first (then id),
        counted in the database (``GROUP BY``); cases no longer in the library are left out."""
        since = self.incident.now() - timedelta(days=days)
        cases = self.incident.library.cases
        return [(cases[cid], n) for cid, n in self.incident.storage.best_case_counts(since, limit) if cid in cases]

    def home_view(self, langs: Sequence[Lang]) -> dict[str, Any]:
        """The App Home tab for ``views.publish`` (at most 100 blocks whatever the library's size)."""
        return build_home_view(
            self.incident.recent_cases(HOME_LIST),
            self.most_matched(30),
            self.feedback_summary(langs[0]),
            langs,
            self.incident.latest_reviews(),
            self._repeated_nodes(),
        )

    def _repeated_nodes(self) -> list[tuple[str, str]]:
        try:
            # App Home is one person's: counts, no links into channels they may not be in.
            hosts = host_lines(self.incident.nodes.repeated(), "en", limit=HOME_LIST, linked=lambda _event: False)
            week = self.incident.storage.list_actions(self.incident.now() - timedelta(days=7))
            return [*hosts, *action_lines(week, limit=HOME_LIST)]
        except StorageError:
            return []  # App Home still shows the rest

    def stats(self) -> FeedbackSummary:
        """What ``incident-bot stats`` prints: votes per case, English titles."""
        return self.feedback_summary("en")
