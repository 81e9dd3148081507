"""The results the bot produces: matches with their evidence and suspects, and rendered replies."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.model.case import Lang, Localized, Strength

Vote = Literal["helpful", "not_helpful"]


class Tier(StrEnum):
    EXACT = "exact"
    STRONG = "strong"
    WEAK = "weak"


class Evidence(BaseModel):
    """A pasted line and what it matched: a signature pattern or a piece of case text."""

    model_config = ConfigDict(frozen=True)

    line: str
    line_no: int
    matched: str
    kind: Literal["signature", "text", "example"]  # example: a line people confirmed for the case
    strength: Strength | None = None
    count: int = 1  # how many pasted lines carried it (hundreds of ranks print the same error)
    note: str = ""  # what it matched, in words (a signature's note); "" for a known line of the case


class Match(BaseModel):
    case_id: str
    title: Localized
    failure_class: str | None
    score: int = Field(ge=0, le=100)
    tier: Tier
    evidence: list[Evidence]


class SuspectInfo(BaseModel):
    """Where the best match's failure happened, from the lines that matched (see ``bot.matching.suspects``)."""

    failed: bool  # True: the lines are the error itself; False: they only report it (collective timeouts)
    summary: str
    hosts: dict[str, int] = Field(default_factory=dict)
    ranks: list[int] = Field(default_factory=list)
    local_ranks: list[int] = Field(default_factory=list)
    pci: list[str] = Field(default_factory=list)
    gpus: list[int] = Field(default_factory=list)
    jobs: list[str] = Field(default_factory=list)
    fills: dict[str, str] = Field(default_factory=dict)
    collective: bool = False  # the lines report a stalled collective (every rank prints one)


class MatchResult(BaseModel):
    matches: list[Match]
    reply: bool
    reply_case_ids: list[str] = Field(default_factory=list)
    truncated: bool = False
    skipped_bytes: int = 0
    skipped_lines: int | None = 0  # newlines in the skipped middle; None when they could not be counted
    long_lines: int = 0  # lines over the line cap, matched by their head and tail
    unread_bytes: int = 0  # the end of a file that was never fetched (a download stopped at its cap)
    timed_out: bool = False
    lines_scanned: int = 0
    suspects: SuspectInfo | None = None
    xids: list[int] = Field(default_factory=list)  # the NVIDIA Xid codes the paste names, in order seen
    job_error: str | None = None  # a line that is the job's own program error (bot.matching.jobside)
    transient: str | None = None  # why the proof is a one-off the run recovered from (bot.matching.numerics)
    # What the unprompted reply was decided from (bot.matching.decision): None when no threshold could make
    # it reply (no case with proof of its own, or a rule outside the model said no).
    reply_features: dict[str, float] | None = None
    reply_probability: float | None = None
    # The paste's error-looking lines (the last few, cut): what a confirmation may keep (bot.matching.examples).
    lines: list[str] = Field(default_factory=list)

    @property
    def best(self) -> Match | None:
        return self.matches[0] if self.matches else None


class Button(BaseModel):
    action_id: str
    text: str
    value: str = ""
    style: Literal["primary", "danger"] | None = None


class Reply(BaseModel):
    """One message for any transport: Block Kit ``blocks`` with their ``text`` fallback, and ``plain``
    for the console."""

    text: str
    blocks: list[dict[str, Any]]
    plain: str
    case_ids: list[str] = Field(default_factory=list)
    tier: str | None = None
    hosts: list[str] = Field(default_factory=list)  # the nodes it names: whose scheduler state may follow
    langs: list[Lang] = Field(default_factory=list)  # the reader's language order it was written in


@dataclass(frozen=True, slots=True)
class ExampleRecord:
    """One confirmed line: ``user_id`` said the reply ``reply_id`` in ``channel`` was ``case_id``."""

    case_id: str
    line: str
    user_id: str
    channel: str
    reply_id: int
    created_at: datetime
    rejections: int = 0
    id: int | None = None


@dataclass(frozen=True, slots=True)
class RejectionRecord:
    """One "Not this case" by ``user_id`` against the stored line ``line`` of ``case_id``."""

    case_id: str
    line: str
    user_id: str
    reviewer: bool
    created_at: datetime
    id: int | None = None


@dataclass(frozen=True, slots=True)
class DraftRecord:
    """A case draft started from a paste no case explained (``bot.app.drafts``): ``fields`` are what the
    form held (titles, summaries, runbook text, proposed signatures, suspects)."""

    author: str
    channel: str
    permalink: str
    fields: dict[str, Any]
    created_at: datetime
    form_nonce: str | None = None
    exported_as: str | None = None
    id: int | None = None


@dataclass(frozen=True, slots=True)
class ReviewRecord:
    """A review of a case: who, when, and an optional note. Stored, so it survives a read-only
    ``CASES_DIR``, a sync and a restart, and every replica sees it."""

    case_id: str
    reviewer: str
    reviewed_at: datetime
    note: str = ""
    id: int | None = None


@dataclass(frozen=True, slots=True)
class NodeEvent:
    """A host an answer named (``bot.app.nodes``): whether it *failed* or only *reported* the failure (a
    collective timeout every healthy rank prints), the case and class, and where the answer was."""

    host: str
    case_id: str
    failure_class: str
    failed: bool
    channel: str
    ts: str  # the answered message's ts ("" for an answer shown only to one person)
    created_at: datetime
    pci: str = ""
    gpu: str = ""
    id: int | None = None
