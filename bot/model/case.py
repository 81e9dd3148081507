"""Pydantic types for incident-library cases.

The case types mirror the library's JSON as served by its API. Every library type keeps fields it does
not know (``extra="allow"``) and dumps exactly the keys it was given, so a case read from the library
round-trips byte-for-byte through ``model_dump(mode="json")`` even as the library grows new fields.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

Lang = Literal["en", "ko"]
LANGS: tuple[Lang, ...] = ("en", "ko")
LangPref = Literal["en", "ko", "both"]  # a user's saved order; "both" follows the Slack locale


class LibraryModel(BaseModel):
    """Base for every type that mirrors the library's JSON: unknown keys kept, unset keys not dumped."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    @model_serializer(mode="wrap")
    def _dump_only_what_was_given(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        keep = self.model_fields_set | set(self.model_extra or {})
        return {key: value for key, value in data.items() if key in keep}


class Localized(LibraryModel):
    """Text in English and Korean; either side may be missing in a case from the library."""

    en: str | None = None
    ko: str | None = None

    def get(self, lang: Lang) -> str | None:
        value = self.en if lang == "en" else self.ko
        return value if value and value.strip() else None

    def langs(self) -> tuple[Lang, ...]:
        return tuple(lang for lang in LANGS if self.get(lang))


class Impact(LibraryModel):
    scope: str | None = None
    users: str | None = None
    region: str | None = None


class Review(LibraryModel):
    written_by: str | None = None
    reviewed_at: str | None = None
    reviewed_by: str | None = None


class Source(LibraryModel):
    url: str
    kind: str | None = None
    license: str | None = None
    archived: str | None = None


class Timeline(LibraryModel):
    detected_after: str | float | None = None
    resolved_after: str | float | None = None


class RemediationStep(LibraryModel):
    text: Localized
    # Local extension: a command with {placeholders} filled from what a paste reveals (see suspects).
    template: str | None = None


RunbookStage = Literal["confirm", "contain", "fix", "verify", "resume"]
RUNBOOK_STAGES: tuple[RunbookStage, ...] = ("confirm", "contain", "fix", "verify", "resume")
# How far a case's failure reaches, the widest its facts establish: ``job`` (the failure and its fix stay
# inside one job: code, configuration, data, checkpoint, environment), ``node`` (one node must leave
# service to be repaired or replaced), ``fleet`` (a shared component, fabric, storage, scheduler or a
# rollout, hurts jobs on many nodes), ``unknown`` (the sources do not say).
SEVERITIES = ("job", "node", "fleet", "unknown")
# What a command template may name: what a pasted log can reveal (bot.matching.suspects).
PLACEHOLDERS = ("node", "pci", "gpu", "rank", "job")


class AppliesWhen(LibraryModel):
    """When a runbook step fits a paste: the paste shows one of ``xid`` (NVIDIA Xid codes) or hits one of
    ``signatures`` (indices into the case's signatures). The first screen shows a step only then; the
    Details view shows every step."""

    xid: list[int] = Field(default_factory=list, max_length=64)
    signatures: list[int] = Field(default_factory=list, max_length=64)


class RunbookStep(LibraryModel):
    """Local extension: one step of what to do the next time, in order confirm, contain, fix, verify,
    resume; ``command`` is a shell template with ``{node}``-style placeholders filled from the paste."""

    stage: RunbookStage
    text: Localized
    command: str | None = None
    assumes: Localized | None = None  # versions and conditions the command needs
    applies_when: AppliesWhen | None = None  # without it, the step fits every paste of the case


class SignatureKind(StrEnum):
    EXACT = "exact"
    REGEX = "regex"


class Strength(StrEnum):
    DECISIVE = "decisive"
    SUPPORTING = "supporting"


class Signature(LibraryModel):
    """Local extension: a string or an RE2 pattern that identifies a failure in a pasted log."""

    kind: SignatureKind = SignatureKind.EXACT
    pattern: str = Field(min_length=3, max_length=2000)
    strength: Strength = Strength.SUPPORTING
    ignore_case: bool = False
    # A decisive line that other failures also cause downstream (every healthy rank prints the NCCL
    # watchdog timeout when one GPU dies): decisive only when no other decisive signature hits the paste.
    fallout: bool = False
    note: str | None = None  # what it matches, in words (English); shown under the matched line
    note_ko: str | None = None  # the same in Korean (error strings copied exactly)
    # Lines this signature must hit; the data tests check every one.
    examples: list[str] = Field(default_factory=list)
    # Where real examples were pasted (public URLs of the dev corpus); never shown in replies.
    sources: list[str] = Field(default_factory=list)
    # RE2 patterns that must each also hit somewhere in the paste for this signature to count: a proof that
    # is a combination ("EOFError: Ran out of input" with a torch.load frame).
    also: list[str] = Field(default_factory=list, max_length=4)


class Case(LibraryModel):
    """One incident case in the library's schema, plus the local matching extensions."""

    id: str
    org: str | None = None
    org_slug: str | None = None
    date: str | None = None
    date_kind: str | None = None
    url: str | None = None
    docs: list[str] = Field(default_factory=list)
    title: Localized = Field(default_factory=Localized)
    summary: Localized = Field(default_factory=Localized)
    trigger: Localized = Field(default_factory=Localized)
    detection: Localized = Field(default_factory=Localized)
    symptoms_text: Localized = Field(default_factory=Localized)
    lessons: Localized = Field(default_factory=Localized)
    domain: list[str] = Field(default_factory=list)
    impact: Impact = Field(default_factory=Impact)
    review: Review = Field(default_factory=Review)
    related: list[Any] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    severity: str | None = None
    symptoms: list[str] = Field(default_factory=list)
    timeline: Timeline = Field(default_factory=Timeline)
    components: list[str] = Field(default_factory=list)
    root_cause: str | None = None
    remediation: list[RemediationStep] = Field(default_factory=list)
    action_items: list[Any] = Field(default_factory=list)
    contributing: list[str] = Field(default_factory=list)
    recurrence_of: str | None = None
    updated_at: str | None = None
    # Local extensions, never sent by the library.
    failure_class: str | None = None
    signatures: list[Signature] = Field(default_factory=list)
    # What to do next time (the historical ``remediation`` stays the record of what was done then).
    runbook: list[RunbookStep] = Field(default_factory=list)
    # The cause in one line, for the first reply ("why"); local, like the runbook.
    gist: Localized | None = None
    # Where a maintainer disagrees with the library's text (never shown in replies).
    review_notes: list[str] = Field(default_factory=list)

    def link(self) -> str | None:
        """The case's own page, else its first source."""
        if self.url:
            return self.url
        return self.sources[0].url if self.sources else None

    def reviewed_at(self) -> datetime | None:
        """``review.reviewed_at`` as an aware datetime (a bare date counts as midnight UTC), or None."""
        return parse_timestamp(self.review.reviewed_at)


def parse_timestamp(value: str | None) -> datetime | None:
    """Parse an ISO date or datetime; naive values are taken as UTC. Returns None for None or junk."""
    if not value:
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
