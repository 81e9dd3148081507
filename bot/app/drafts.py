"""Drafts and reviews, the use cases.

A paste no case explains can start a case draft (Slack's "Start a case draft", or ``:draft`` in the
console): its error lines, redacted, are proposed as signatures, each checked like a case file's. A stored
draft is exported as a case file with the next free local id (``CASE_ID_PREFIX``, default ``LOC``).

A review is a record in storage (case, reviewer, time, note), so it works with a read-only ``CASES_DIR``,
across replicas, and survives a sync. A case that fails validation cannot be reviewed. The digest's "newly
reviewed" is the latest of the file's ``review.reviewed_at`` and its review records.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.library.case_store import Problem, parse_case
from bot.library.drafts import draft_case, draft_problems, next_local_id, plain_field, propose_signatures, propose_title
from bot.library.review import command_problems
from bot.library.safety import safety_problems
from bot.model.case import Case
from bot.model.results import DraftRecord, MatchResult, ReviewRecord
from bot.storage.base import Storage


@dataclass(frozen=True)
class DraftOutcome:
    """A submitted form: the stored draft's id, or the problems (nothing stored)."""

    draft_id: int | None
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class WithReview:
    """A case summary whose review time is the latest of its file's and its review records'."""

    item: Any
    stored: datetime | None

    @property
    def id(self) -> str:
        return str(self.item.id)

    def reviewed_at(self) -> datetime | None:
        own: datetime | None = self.item.reviewed_at()
        times = [t for t in (own, self.stored) if t is not None]
        return max(times) if times else None


class Drafts:
    """Drafts and reviews over ``storage``; ``lines_of`` gives the redacted lines of a result."""

    def __init__(self, storage: Storage, prefix: str = "LOC") -> None:
        self.storage = storage
        self.prefix = prefix

    # -- drafts -------------------------------------------------------------------------------------

    @staticmethod
    def initial_fields(lines: Sequence[str], suspects: str = "") -> dict[str, str]:
        """The form's first values: a title from the top error line, the proposed signatures (most
        specific first) and the suspects."""
        fields = {"signatures": "\n".join(propose_signatures(lines)), "suspects": suspects[:300]}
        title = propose_title(lines)
        return {"title_en": title, **fields} if title else fields

    def submit(
        self,
        fields: Mapping[str, Any],
        author: str,
        channel: str,
        permalink: str,
        now: datetime,
        form: str | None = None,
    ) -> DraftOutcome:
        """Check the form's fields like a case file and store them as a draft; nothing is stored when a
        problem is found. Terminal control sequences are taken out of every field first. ``form`` names the
        form it came from: submitted again (a replay, a double click), it stores nothing new."""
        clean = {key: plain_field(fields.get(key)) for key in (*_FORM, "suspects")}
        problems = draft_problems(clean)
        if problems:
            return DraftOutcome(None, tuple(problems))
        record = DraftRecord(author, channel, permalink, {k: v for k, v in clean.items() if v}, now, form)
        return DraftOutcome(self.storage.add_draft(record))

    def from_result(self, result: MatchResult, lines: Sequence[str], title: str, summary: str) -> dict[str, str]:
        """Console drafts: the fields for ``title`` and ``summary`` with the result's proposals."""
        suspects = result.suspects.summary if result.suspects is not None else ""
        initial = self.initial_fields(lines, suspects)
        return {**initial, "title_en": title or initial.get("title_en", ""), "summary_en": summary}

    def export(self, draft_id: int, directory: Path, taken: Iterable[str]) -> tuple[Path, str]:
        """Write draft ``draft_id`` as ``directory/<id>.json`` with the next free local id (after ``taken``
        and the files already in ``directory``). Raises LookupError for an unknown draft."""
        draft = self.storage.get_draft(draft_id)
        if draft is None:
            raise LookupError(f"no draft {draft_id}")
        if draft.exported_as is not None:
            raise FileExistsError(f"draft D-{draft_id} was already exported as {draft.exported_as}")
        directory.mkdir(parents=True, exist_ok=True)
        existing = [p.stem for p in directory.glob("*.json")]
        case_id = next_local_id([*taken, *existing], self.prefix)
        case = draft_case(draft.fields, case_id, draft.author, draft.permalink)
        path = directory / f"{case_id}.json"
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(case, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        os.replace(temporary, path)
        self.storage.mark_draft_exported(draft_id, case_id)
        return path, case_id

    # -- reviews ------------------------------------------------------------------------------------

    @staticmethod
    def validation_errors(case: Case, path: Path | None) -> list[Problem]:
        """Why ``case`` may not be reviewed: its file's errors (read again from disk when there is one)
        and its command templates' errors."""
        where = str(path) if path is not None else case.id
        if path is not None:
            try:
                raw = path.read_bytes()
            except OSError as exc:
                return [Problem(where, "", f"cannot be read: {exc.strerror or exc}")]
            parsed, _, problems = parse_case(raw, where)
            errors = [p for p in problems if p.severity == "error"]
            if parsed is None or errors:
                return errors or [Problem(where, "", "does not load")]
            case = parsed
        found = [*command_problems(case, where), *safety_problems(case, where)]
        return [p for p in found if p.severity == "error"]

    def review(
        self, case: Case, path: Path | None, reviewer: str, note: str, now: datetime
    ) -> tuple[ReviewRecord | None, list[Problem]]:
        """Record a review of ``case`` by ``reviewer``, unless the case fails validation."""
        errors = self.validation_errors(case, path)
        if errors:
            return None, errors
        record = ReviewRecord(case.id, reviewer[:100], now, note.strip()[:500])
        return ReviewRecord(record.case_id, record.reviewer, now, record.note, self.storage.add_review(record)), []

    def latest_reviews(self) -> dict[str, ReviewRecord]:
        """The newest review record per case."""
        latest: dict[str, ReviewRecord] = {}
        for record in self.storage.list_reviews():
            latest[record.case_id] = record  # oldest first: the last one wins
        return latest


_FORM = ("title_en", "title_ko", "summary_en", "summary_ko", "runbook_en", "runbook_ko", "signatures")
