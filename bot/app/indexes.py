"""The matcher and the search index of a library, opened from its start-up snapshot when it has one.

Each index is opened from the snapshot directory when it is there and checks out (tantivy's own files,
holding exactly this library's documents); otherwise it is built, from the whole cases, into the snapshot
(or in memory without one) and then used. A snapshot index that does not open is discarded and rebuilt.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import tantivy

from bot.app.search import CaseSearch, build_index, register
from bot.app.search import schema as search_schema
from bot.library.case_store import CaseLibrary
from bot.library.snapshot import Snapshot
from bot.matching.casetext import CASE_TEXT_DF_SHARE, CaseTextRanker, case_text_documents
from bot.matching.engine import TextEngine, schema
from bot.matching.knownlines import KNOWN_LINES_DF_SHARE, MatcherParts, known_lines
from bot.matching.matcher import Matcher
from bot.matching.ranking import MatchConfig
from bot.model.case import Case

log = logging.getLogger("incident_bot.indexes")
T = TypeVar("T")


def _whole(library: CaseLibrary) -> Mapping[str, Case]:
    """Every case in full, in the library's order (loads the ones not read yet)."""
    return {case_id: library.cases[case_id] for case_id in library.cases}


def _persisted(
    snapshot: Snapshot, name: str, fields: Callable[[], Any], build: Callable[[Any], object], use: Callable[[Any], T]
) -> T:
    """``use(index)`` on the snapshot's index ``name`` (of schema ``fields()``), built there first when
    needed."""
    for attempt in (1, 2):
        path = snapshot.index_dir(name, lambda directory: build(tantivy.Index(fields(), path=str(directory))))
        try:
            return use(tantivy.Index.open(str(path)))
        except Exception as exc:  # a broken or foreign index: rebuild it once
            if attempt == 2:
                raise
            log.warning("snapshot index %s did not open (%s); rebuilding it", name, exc)
            snapshot.discard_index(name)
    raise AssertionError("unreachable")


def build_matcher(library: CaseLibrary, config: MatchConfig) -> Matcher:
    snapshot = library.snapshot if isinstance(library.snapshot, Snapshot) else None
    if snapshot is None:
        return Matcher(_whole(library), library.signatures, config, sets=library.sets)
    parts = _matcher_parts(library, snapshot, config)
    return Matcher(library.summaries, library.signatures, config, sets=library.sets, parts=parts)


def _matcher_parts(library: CaseLibrary, snapshot: Snapshot, config: MatchConfig) -> MatcherParts:
    """The snapshot's known-line index stores each line with its document, so a start loads no list of
    lines at all; the matcher reads the few that hit."""
    count: list[int] = []

    def build_known(index: Any) -> None:
        lines = known_lines(_whole(library), library.signatures, config.docs_per_case)
        count.append(len(lines))
        TextEngine.build(
            [line.text for line in lines],
            index,
            max_df_share=KNOWN_LINES_DF_SHARE,
            payloads=[line.payload() for line in lines],
        )

    def open_known(index: Any) -> TextEngine:
        documents = count[0] if count else int(index.searcher().num_docs)
        return TextEngine.from_index(index, documents, max_df_share=KNOWN_LINES_DF_SHARE)

    known_engine = _persisted(snapshot, f"known-lines-{config.docs_per_case}", schema, build_known, open_known)
    case_engine = _persisted(
        snapshot,
        "case-text",
        schema,
        lambda index: TextEngine.build(
            case_text_documents(_whole(library)), index, max_df_share=CASE_TEXT_DF_SHARE, identifiers=False
        ),
        lambda index: TextEngine.from_index(
            index, len(library.cases), max_df_share=CASE_TEXT_DF_SHARE, identifiers=False
        ),
    )
    return MatcherParts(None, known_engine, CaseTextRanker(library.summaries, case_engine))


def build_search(library: CaseLibrary) -> CaseSearch:
    snapshot = library.snapshot if isinstance(library.snapshot, Snapshot) else None
    if snapshot is None:
        return CaseSearch.build(_whole(library).values())
    return _persisted(
        snapshot,
        "search",
        search_schema,
        lambda index: build_index(_whole(library).values(), register(index)),
        lambda index: CaseSearch(list(library.cases), register(index)),
    )
