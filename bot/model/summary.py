"""What lists, rankings and the digest need of a case, without the whole case. Pure.

A library of tens of thousands of cases keeps one small ``CaseSummary`` per case in memory and reads the
whole case only when it is shown (``CaseLibrary.cases`` loads it on first use).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.model.case import Case, Localized, parse_timestamp


@dataclass(frozen=True, slots=True)
class CaseSummary:
    id: str
    title: Localized
    failure_class: str | None = None
    components: tuple[str, ...] = ()
    symptoms: tuple[str, ...] = ()
    root_cause: str | None = None
    related: tuple[str, ...] = ()
    reviewed: str | None = None  # review.reviewed_at as written
    date: str | None = None
    org: str | None = None

    @classmethod
    def of(cls, case: Case) -> CaseSummary:
        return cls(
            id=case.id,
            title=case.title,
            failure_class=case.failure_class,
            components=tuple(case.components),
            symptoms=tuple(case.symptoms),
            root_cause=case.root_cause,
            related=tuple(str(item) for item in case.related),
            reviewed=case.review.reviewed_at,
            date=case.date,
            org=case.org,
        )

    def reviewed_at(self) -> datetime | None:
        return parse_timestamp(self.reviewed)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": {"en": self.title.get("en"), "ko": self.title.get("ko")},
            "failure_class": self.failure_class,
            "components": list(self.components),
            "symptoms": list(self.symptoms),
            "root_cause": self.root_cause,
            "related": list(self.related),
            "reviewed": self.reviewed,
            "date": self.date,
            "org": self.org,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CaseSummary:
        return cls(
            id=str(data["id"]),
            title=Localized(**{k: v for k, v in data["title"].items() if v is not None}),
            failure_class=data.get("failure_class"),
            components=tuple(data.get("components") or ()),
            symptoms=tuple(data.get("symptoms") or ()),
            root_cause=data.get("root_cause"),
            related=tuple(data.get("related") or ()),
            reviewed=data.get("reviewed"),
            date=data.get("date"),
            org=data.get("org"),
        )
