"""The Slack side of drafts, as use cases: what the "Start a case draft" click opens, and what a submitted
form stores. The handler (``handlers/drafts.py``) only moves payloads and calls the Web API."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.app.feedback import FeedbackService
from bot.model.case import Lang
from bot.replies.buttons import Click
from bot.replies.drafts import (
    DraftStart,
    error_block,
    form_view,
    parse_draft_value,
    saved_text,
    submitted_fields,
    words,
)


@dataclass(frozen=True)
class Opened:
    """Where the form came from, as its sealed metadata says."""

    lang: Lang
    channel: str
    thread: str
    permalink: str
    form: str | None = None  # the form's one-time name (a replay of it stores nothing more)


@dataclass(frozen=True)
class Submitted:
    """A submission's outcome: ``errors`` (block id -> message) to show in the form, or the stored draft
    with the message to post where the paste was."""

    errors: dict[str, str]
    draft_id: int | None = None
    message: str = ""
    opened: Opened | None = None


class DraftFlow:
    def __init__(self, feedback: FeedbackService) -> None:
        self.feedback = feedback
        self.incident = feedback.incident

    def start(self, click: Click) -> DraftStart | None:
        """The clicked button's lines, when the value is ours and was clicked where it was shown."""
        value = self.feedback.unseal(click.value, click.channel_id, click.user_id)
        return parse_draft_value(value) if value is not None else None

    def form(self, start: DraftStart, click: Click, thread: str, permalink: str) -> dict[str, Any]:
        """The filled form: proposed signatures (checked), suspects, empty bilingual fields."""
        initial = self.incident.drafts.initial_fields(start.lines, start.suspects)
        form = secrets.token_urlsafe(12)  # one form, one draft: a replayed submission stores nothing more
        inner = json.dumps({"l": start.lang, "t": thread, "p": permalink, "u": initial["suspects"], "n": form})
        sealed = self.feedback.seal_value(inner, click.channel_id, click.user_id)
        metadata = json.dumps({"c": click.channel_id, "s": sealed})
        return form_view(start.lang, initial, metadata)

    def _opened(self, metadata: object, user: str) -> tuple[Opened, str] | None:
        try:
            outer = json.loads(metadata) if isinstance(metadata, str) and len(metadata) <= 3000 else None
            channel = outer.get("c") if isinstance(outer, dict) else None
            sealed = outer.get("s") if isinstance(outer, dict) else None
            if not isinstance(channel, str) or not isinstance(sealed, str) or not user:
                return None
            inner_raw = self.feedback.unseal(sealed, channel, user)
            inner = json.loads(inner_raw) if inner_raw is not None else None
        except (ValueError, RecursionError):
            return None
        if not isinstance(inner, dict) or inner.get("l") not in ("en", "ko"):
            return None
        lang: Lang = "en" if inner["l"] == "en" else "ko"
        form = str(inner.get("n") or "")[:40] or None
        opened = Opened(lang, channel, str(inner.get("t") or ""), str(inner.get("p") or ""), form)
        return opened, str(inner.get("u") or "")

    def submit(self, view: Mapping[str, Any], user: str) -> Submitted:
        """Check and store a submitted form. A form that is not this user's (or not ours) stores nothing."""
        found = self._opened(view.get("private_metadata"), user)
        if found is None:
            return Submitted({"title_en": words("expired", "en")})
        opened, suspects = found
        fields = {**submitted_fields(view), "suspects": suspects}
        outcome = self.incident.drafts.submit(
            fields, user, opened.channel, opened.permalink, self.incident.now(), opened.form
        )
        if outcome.draft_id is None:
            errors: dict[str, str] = {}
            for problem in outcome.problems:
                block = error_block(problem.field)
                errors.setdefault(block, f"{problem.field}: {problem.message}"[:300])
            return Submitted(errors, opened=opened)
        title = fields.get("title_en") or fields.get("title_ko") or ""
        return Submitted({}, outcome.draft_id, saved_text(outcome.draft_id, user, title, opened.lang), opened)
