"""The hand-written BM25 the bot used before tantivy, kept only as a baseline for ``bench.index_compare``.

A small BM25 inverted index with log-aware tokens; pure.

Identifiers are kept whole and also split (``cudaErrorECCUncorrectable`` gives ``cudaerroreccuncorrectable``,
``cuda``, ``error``, ``ecc``, ``uncorrectable``), and a short number is joined to the word before it
(``Xid 79`` gives ``xid_79``), so codes are searchable without every pid and address becoming a term.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z0-9_]{1,80}|[\uac00-\ud7a3]{1,40}")
_HEXISH = re.compile(r"(?:0x)?[0-9a-fA-F_]{1,80}")
_XID = re.compile(r"\bXid\b(?: \(PCI:[0-9a-fA-F:.]{1,20}\))?:? {0,2}(\d{1,3})\b")
_CAMEL = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|\d|\b)|[A-Z]?[a-z]{1,40}|[A-Z]{1,40}|\d{1,12}")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "is",
        "was",
        "be",
        "by",
        "and",
        "or",
        "not",
        "with",
        "from",
        "as",
        "it",
        "this",
        "that",
        "are",
        "were",
        "has",
        "have",
        "had",
        "into",
        "its",
        "than",
        "then",
        "but",
        "if",
        "so",
        "no",
    ]
)
_MAX_NUMBER_DIGITS = 3
_K1 = 1.2
_B = 0.75


@lru_cache(maxsize=262_144)
def _word_terms(word: str) -> tuple[str, ...]:
    """The terms one alphabetic word contributes: itself lower-cased, plus its camel/snake parts."""
    lower = word.lower()
    if lower in _STOP or len(lower) < 2:
        return ()
    parts = [p.lower() for p in _CAMEL.findall(word.replace("_", " ")) if not p.isdigit()]
    if len(parts) > 1:
        return (lower, *(p for p in parts if len(p) > 1 and p not in _STOP and p != lower))
    return (lower,)


def tokenize(text: str, *, limit: int = 400) -> list[str]:
    """Lower-case terms of ``text`` (at most ``limit`` source words are read)."""
    terms = [f"xid_{code}" for code in _XID.findall(text[: limit * 5])]
    previous = ""
    for count, found in enumerate(_WORD.finditer(text)):
        if count >= limit:
            break
        word = found.group()
        if word.isdigit():
            if len(word) <= _MAX_NUMBER_DIGITS and previous:
                terms.append(f"{previous}_{word}")
            previous = ""
            continue
        if not word.isalpha() and any(c.isdigit() for c in word) and _HEXISH.fullmatch(word):
            previous = ""  # addresses, PCI ids, hashes: noise
            continue
        previous = word.lower()
        terms.extend(_word_terms(word))
    return terms


@dataclass(frozen=True, slots=True)
class Hit:
    doc: int
    score: float


class BM25Index:
    """Okapi BM25 over a fixed list of documents. Build once; query many times."""

    def __init__(self, documents: Sequence[str], *, max_df_share: float = 0.25, doc_limit: int = 400) -> None:
        """``doc_limit``: words read from each document (short log lines by default; raise it for whole
        case texts)."""
        self._postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._lengths: list[int] = []
        for doc_id, text in enumerate(documents):
            terms = tokenize(text, limit=doc_limit)
            self._lengths.append(len(terms))
            for term, tf in Counter(terms).items():
                self._postings[term].append((doc_id, tf))
        count = max(1, len(self._lengths))
        self._avg = (sum(self._lengths) / count) or 1.0
        # Terms in more than max_df_share of a large collection carry little and cost the most.
        cutoff = max(50, int(count * max_df_share))
        self._idf: dict[str, float] = {}
        for term, postings in self._postings.items():
            df = len(postings)
            if df <= cutoff:
                self._idf[term] = math.log(1 + (count - df + 0.5) / (df + 0.5))

    def __len__(self) -> int:
        return len(self._lengths)

    def idf(self, term: str) -> float:
        return self._idf.get(term, 0.0)

    def search(
        self, query: str | Iterable[str], top: int = 5, min_score: float = 0.0, *, limit: int = 400
    ) -> list[Hit]:
        """Best documents for ``query`` (text, of which at most ``limit`` words are read, or terms),
        highest score first."""
        terms = tokenize(query, limit=limit) if isinstance(query, str) else list(query)
        scores: dict[int, float] = defaultdict(float)
        for term in set(terms):
            idf = self._idf.get(term)
            if idf is None:
                continue
            for doc_id, tf in self._postings[term]:
                norm = _K1 * (1 - _B + _B * self._lengths[doc_id] / self._avg)
                scores[doc_id] += idf * tf * (_K1 + 1) / (tf + norm)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return [Hit(doc, score) for doc, score in ranked[:top] if score > min_score]
