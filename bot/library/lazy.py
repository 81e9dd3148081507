"""The library's cases by id, each read in full only when first used.

A start-up snapshot gives the summaries of tens of thousands of cases at once; the whole case (summary,
remediation, lessons in both languages) is parsed from the snapshot's copy the first time it is shown,
then kept. Lists, rankings and the digest work on ``summaries`` and never load what they do not show.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from bot.model.case import Case
from bot.model.summary import CaseSummary


class LazyCases(Mapping[str, Case]):
    """A read-only mapping of case id to :class:`Case`; loading on first access is thread-safe."""

    def __init__(self, cases: Mapping[str, Case] | None = None) -> None:
        self._ids: dict[str, None] = {}  # every id, in order
        self._summaries: dict[str, CaseSummary] = {}
        self._raw_summaries: dict[str, dict[str, Any]] = {}
        self._loaded: dict[str, Case] = {}
        self._loaders: dict[str, Callable[[], Case]] = {}
        self._lock = threading.Lock()
        for case in (cases or {}).values():
            self.put(case)

    def put(self, case: Case, summary: CaseSummary | None = None) -> None:
        """Add a case that is already in memory."""
        self._ids[case.id] = None
        self._summaries[case.id] = summary or CaseSummary.of(case)
        self._loaded[case.id] = case
        self._loaders.pop(case.id, None)

    def put_lazy(self, summary: CaseSummary, load: Callable[[], Case]) -> None:
        """Add a case known by its summary; ``load`` reads it in full when it is first used."""
        self._ids[summary.id] = None
        self._summaries[summary.id] = summary
        self._loaders[summary.id] = load
        self._loaded.pop(summary.id, None)

    def put_saved(self, case_id: str, summary: dict[str, Any], load: Callable[[], Case]) -> None:
        """Add a case by its saved summary (made a :class:`CaseSummary` when first asked for)."""
        self._ids[case_id] = None
        self._raw_summaries[case_id] = summary
        self._loaders[case_id] = load

    def release(self, loaders: Mapping[str, Callable[[], Case]]) -> None:
        """Let go of the whole cases that ``loaders`` can read again (after the indexes were built)."""
        with self._lock:
            for case_id, load in loaders.items():
                if case_id in self._ids:
                    self._loaders[case_id] = load
                    self._loaded.pop(case_id, None)

    def remove(self, case_id: str) -> None:
        self._ids.pop(case_id, None)
        self._raw_summaries.pop(case_id, None)
        self._summaries.pop(case_id, None)
        self._loaded.pop(case_id, None)
        self._loaders.pop(case_id, None)

    @property
    def summaries(self) -> Mapping[str, CaseSummary]:
        return _Summaries(self)

    def summary(self, case_id: str) -> CaseSummary:
        made = self._summaries.get(case_id)
        if made is None:
            raw = self._raw_summaries.get(case_id)
            if raw is None:
                raise KeyError(case_id)
            made = self._summaries[case_id] = CaseSummary.from_json(raw)
        return made

    @property
    def loaded(self) -> int:
        """How many cases are in memory in full (the rest are summaries until used)."""
        return len(self._loaded)

    def __getitem__(self, case_id: str) -> Case:
        case = self._loaded.get(case_id)
        if case is not None:
            return case
        load = self._loaders.get(case_id)
        if load is None:
            raise KeyError(case_id)
        case = load()
        with self._lock:
            self._loaded.setdefault(case_id, case)
            return self._loaded[case_id]

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._ids

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


class _Summaries(Mapping[str, CaseSummary]):
    """The summaries of a :class:`LazyCases`, each made when first asked for."""

    def __init__(self, cases: LazyCases) -> None:
        self._cases = cases

    def __getitem__(self, case_id: str) -> CaseSummary:
        return self._cases.summary(case_id)

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._cases

    def __iter__(self) -> Iterator[str]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)
