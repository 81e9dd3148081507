"""Full-text ranking with tantivy (BM25, in Rust): the known error lines and the whole case texts.

Log-aware terms without a Python tokenizer in the hot path: ``prepare`` adds, with C-level regular
expressions, what tantivy's simple tokenizer would miss, and tantivy tokenizes the result in Rust. So an
identifier counts whole and by its parts (``cudaErrorECCUncorrectable`` also gives ``cuda``, ``error``,
``ecc``, ``uncorrectable``; ``NCCL_SOCKET_IFNAME`` also gives ``nccl_socket_ifname``) and an Xid code is one
term (``Xid 79`` gives ``xid79``). Queries are analyzed by the same analyzer; terms in more than
``max_df_share`` of the documents are dropped and at most ``MAX_QUERY_TERMS`` of the rarest are kept, so
a query's cost does not grow with how common its words are (tantivy's block-max WAND skips the rest).

This module builds indexes in memory; the start-up snapshot (``bot.library.snapshot``) builds the same
ones in a directory and opens them again with :meth:`TextEngine.from_index` (tantivy's own files: data,
never code).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import tantivy

MAX_QUERY_TERMS = 64
_MAX_TERM = 40  # tantivy's default analyzer drops longer tokens
# Words and numbers (one linear pass); Python splits only the mixed-case words and joins codes. A short
# number after a word is a code of that word (``status=12`` gives ``status12``); alone, numbers are pids,
# addresses and counts, left out of queries.
_TOKEN = re.compile(r"[A-Za-z0-9_]{1,80}")
_CAMEL_PARTS = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|\d|\b)|[A-Z]?[a-z]+|[A-Z]+|\d+")
_XID = re.compile(r"\bXid\b(?: \(PCI:[0-9a-fA-F:.]{1,20}\))?:? {0,2}(\d{1,3})\b", re.IGNORECASE)


def prepare(text: str, *, identifiers: bool = True) -> str:
    """``text`` followed by the extra forms of its codes and (with ``identifiers``) of its identifiers."""
    extra: list[str] = []
    if identifiers:
        previous = ""
        for word in _TOKEN.findall(text):
            if word.isdigit():
                if previous and len(word) <= 3:  # a short number after a word is a code of it: status=12
                    extra.append(previous + word)
                previous = ""
                continue
            if "_" in word:
                extra.append(word.replace("_", ""))
            elif len(word) > 2 and not word.islower() and not word.isupper() and not word.istitle():
                extra.append(" ".join(_CAMEL_PARTS.findall(word)))
            previous = word if word.isalpha() else ""
    if "xid" in text.lower():  # a C-speed check first: scanning for the pattern costs far more
        extra += [f"xid{code}" for code in _XID.findall(text)]
    return f"{text}\n{' '.join(extra)}" if extra else text


def noise(term: str) -> bool:
    """A number, or a hex-looking word with a digit (an address, a PCI id, a hash)."""
    return term.isdigit() or (any(c.isdigit() for c in term) and all(c in "0123456789abcdef" for c in term))


def _analyzer() -> Any:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(_MAX_TERM))
        .filter(tantivy.Filter.lowercase())
        .build()
    )


def schema() -> Any:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("doc", stored=True, fast=True)
    builder.add_text_field("text", stored=False, tokenizer_name="default", index_option="freq")
    builder.add_bytes_field("payload", stored=True, indexed=False)  # what a hit carries back (optional)
    return builder.build()


@dataclass(frozen=True, slots=True)
class Hit:
    doc: int
    score: float
    payload: bytes | None = None


_TIE_ROOM = 4  # extra hits read so that ties at the cut are settled by document order


class TextEngine:
    """A BM25 index over a fixed list of documents (their positions are the ids ``search`` returns)."""

    def __init__(self, index: Any, count: int, max_df_share: float, identifiers: bool = True) -> None:
        self._index = index
        self._identifiers = identifiers
        self._schema = index.schema
        self._searcher = index.searcher()
        self._analyzer = _analyzer()
        self._count = count
        self._max_df = max(1, int(count * max_df_share)) if count > 40 else count

    @classmethod
    def build(
        cls,
        documents: Sequence[str],
        index: Any | None = None,
        *,
        max_df_share: float = 0.5,
        identifiers: bool = True,
        payloads: Sequence[bytes] | None = None,
    ) -> TextEngine:
        """Index ``documents`` into ``index`` (an empty ``tantivy.Index`` of :func:`schema`; a new one in
        memory by default). ``identifiers``: add the split forms of identifiers (short texts such as log
        lines; whole case texts are left to tantivy alone, which is much faster). ``payloads``: bytes
        stored with each document and returned with its hits."""
        index = index if index is not None else tantivy.Index(schema())
        writer = index.writer(heap_size=128_000_000, num_threads=2)
        for position, text in enumerate(documents):
            document = tantivy.Document()
            document.add_unsigned("doc", position)
            document.add_text("text", prepare(text, identifiers=identifiers))
            if payloads is not None:
                document.add_bytes("payload", payloads[position])
            writer.add_document(document)
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        return cls(index, len(documents), max_df_share, identifiers)

    @classmethod
    def from_index(cls, index: Any, count: int, *, max_df_share: float = 0.5, identifiers: bool = True) -> TextEngine:
        """An engine on an index built earlier; raises ``ValueError`` unless it holds ``count`` documents."""
        engine = cls(index, count, max_df_share, identifiers)
        if engine._searcher.num_docs != count:
            raise ValueError(f"the index holds {engine._searcher.num_docs} documents, not {count}")
        return engine

    def __len__(self) -> int:
        return self._count

    def terms(self, text: str, limit: int = 4000) -> list[str]:
        """The distinct terms of ``text`` (its first ``limit`` words), as the index sees them."""
        words = text.split(maxsplit=limit)
        clipped = " ".join(words[:limit]) if len(words) > limit else text
        analyzed = self._analyzer.analyze(prepare(clipped, identifiers=self._identifiers))
        return [term for term in dict.fromkeys(analyzed) if not noise(term)]

    def _query(self, terms: Iterable[str]) -> Any | None:
        """Should-clauses for the rarest terms that some, but not too many, documents contain."""
        rare: list[tuple[int, str]] = []
        for term in terms:
            df = self._doc_freq(term)
            if 0 < df <= self._max_df:
                rare.append((df, term))
        if not rare:
            return None
        rare.sort()
        clauses = [
            (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "text", term))
            for _, term in rare[:MAX_QUERY_TERMS]
        ]
        return tantivy.Query.boolean_query(clauses)

    def _doc_freq(self, term: str) -> int:
        return int(self._searcher.doc_freq("text", term))

    def search(self, text: str, top: int = 5, min_score: float = 0.0, *, limit: int = 4000) -> list[Hit]:
        """The best documents for ``text``, highest score first."""
        query = self._query(self.terms(text, limit))
        if query is None:
            return []
        # A few more than asked, then equal scores in document order: the index is written on two threads,
        # so which segment holds a document, and the order of ties, vary from build to build.
        result = self._searcher.search(query, limit=top + _TIE_ROOM, count=False)
        found = result.hits
        if 0 < top < len(found):  # only a tie with the last one kept is read beyond ``top``
            last = round(found[top - 1][0], 4)
            found = [*found[:top], *(hit for hit in found[top:] if round(hit[0], 4) == last)]
        hits = []
        for score, address in found:
            if score > min_score:
                stored = self._searcher.doc(address)
                payload = stored.get_first("payload")
                hits.append(Hit(int(stored["doc"][0]), float(score), bytes(payload) if payload else None))
        hits.sort(key=lambda hit: (-round(hit.score, 4), hit.doc))
        return hits[:top]
