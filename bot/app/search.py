"""``/incident search WORDS``: cases ranked by where the words appear, with tantivy (BM25 per field).

A word counts most in the case id, then in the failure class, the components, the title (either
language), and last anywhere in the body (summary, symptoms, root cause, lessons): each word scores in the
best field it appears in (a disjunction-max), and a case's score adds its words. A code such as ``Xid 79``
counts like the class wherever it appears. Korean is also compared by two-syllable pieces, so ``메모리``
finds ``메모리가`` and ``공유메모리``. Rare words weigh more than common ones (BM25's idf).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import tantivy

from bot.matching.engine import noise, prepare
from bot.model.case import Case
from bot.model.ids import canonical_id

ID_WEIGHT = 20.0
CLASS_WEIGHT = 8.0
COMPONENT_WEIGHT = 6.0
TITLE_WEIGHT = 4.0
BODY_WEIGHT = 1.5
FIELDS = {
    "failure_class": CLASS_WEIGHT,
    "codes": CLASS_WEIGHT,
    "components": COMPONENT_WEIGHT,
    "title": TITLE_WEIGHT,
    "body": BODY_WEIGHT,
}
KOREAN = {"ko_title": TITLE_WEIGHT, "ko_body": BODY_WEIGHT}
_HANGUL = re.compile(r"[\uac00-\ud7a3]{2,40}")
_CODE = re.compile(r"\bxid\d{1,3}\b")
_QUERY_WORDS = 40


def _both(*texts: Any) -> str:
    return "\n".join(part for text in texts for part in (text.get("en") or "", text.get("ko") or ""))


def _hangul(*texts: str) -> str:
    return " ".join(word for text in texts for word in _HANGUL.findall(text))


def codes(text: str) -> str:
    """The Xid codes ``text`` names, as the terms the index keeps (``xid79``)."""
    return " ".join(_CODE.findall(prepare(text, identifiers=False).lower())) if "xid" in text.lower() else ""


def schema() -> Any:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("doc", stored=True, fast=True)
    for name in FIELDS:
        builder.add_text_field(name, stored=False, tokenizer_name="default", index_option="freq")
    for name in KOREAN:
        builder.add_text_field(name, stored=False, tokenizer_name="ko2", index_option="freq")
    return builder.build()


def register(index: Any) -> Any:
    """``index`` with the two-syllable tokenizer registered (tantivy keeps no custom tokenizer on disk)."""
    index.register_tokenizer("ko2", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(2, 2, False)).build())
    return index


def documents(cases: Iterable[Case]) -> list[dict[str, str]]:
    """Each case's fields as the index reads them, in order."""
    out = []
    for case in cases:
        body = _both(case.summary, case.symptoms_text, case.trigger, case.detection, case.lessons)
        body += "\n" + "\n".join([*case.symptoms, case.root_cause or "", case.org or ""])
        title = _both(case.title)
        out.append(
            {
                "failure_class": (case.failure_class or "").replace("-", " "),
                "codes": codes(f"{title}\n{body}"),
                "components": " ".join(case.components).replace("-", " "),
                "title": title,
                "body": body,
                "ko_title": _hangul(case.title.get("ko") or ""),
                "ko_body": _hangul(
                    *(text.get("ko") or "" for text in (case.summary, case.symptoms_text, case.lessons))
                ),
            }
        )
    return out


def build_index(cases: Iterable[Case], index: Any | None = None) -> Any:
    """A search index of ``cases`` (in order) in ``index`` (an empty ``tantivy.Index`` of :func:`schema`;
    a new one in memory by default)."""
    index = register(index if index is not None else tantivy.Index(schema()))
    writer = index.writer(heap_size=128_000_000, num_threads=2)
    for number, fields in enumerate(documents(cases)):
        document = tantivy.Document()
        document.add_unsigned("doc", number)
        for name, text in fields.items():
            document.add_text(name, text)
        writer.add_document(document)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


class CaseSearch:
    """Built once per library snapshot (or opened from the start-up snapshot); ``search`` is thread-safe."""

    def __init__(self, ids: Iterable[str], index: Any) -> None:
        """``index``: a search index holding the cases ``ids`` names, in that order (:func:`build_index`)."""
        self._ids = list(ids)
        self._positions = {case_id: number for number, case_id in enumerate(self._ids)}
        if index.searcher().num_docs != len(self._ids):
            raise ValueError(f"the search index holds {index.searcher().num_docs} cases, not {len(self._ids)}")
        self._index = index
        self._schema = index.schema
        self._searcher = index.searcher()
        self._analyzer = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase())
            .build()
        )

    @classmethod
    def build(cls, cases: Iterable[Case]) -> CaseSearch:
        listed = list(cases)
        return cls([case.id for case in listed], build_index(listed))

    def _word_query(self, term: str, fields: Mapping[str, float]) -> Any:
        parts = []
        for name, weight in fields.items():
            query = tantivy.Query.term_query(self._schema, name, term)
            if name == "codes":
                # A code names one fault: having it counts, however long the case or often it repeats.
                frequency = int(self._searcher.doc_freq(name, term))
                if frequency:
                    idf = math.log(1 + (len(self._ids) - frequency + 0.5) / (frequency + 0.5))
                    parts.append(tantivy.Query.const_score_query(query, weight * idf))
                continue
            parts.append(tantivy.Query.boost_query(query, weight))
        return tantivy.Query.disjunction_max_query(parts)

    def search(self, words: str, limit: int = 8) -> list[str]:
        """Case ids, best first; only cases that contain at least one of the words."""
        wanted = canonical_id(words.strip())
        first = [wanted] if wanted is not None and wanted in self._positions else []
        text = " ".join(words.split()[:_QUERY_WORDS])
        terms = [term for term in dict.fromkeys(self._analyzer.analyze(prepare(text))) if not noise(term)]
        clauses = [(tantivy.Occur.Should, self._word_query(term, FIELDS)) for term in terms]
        for word in _HANGUL.findall(text):
            pieces = dict.fromkeys(word[i : i + 2] for i in range(len(word) - 1))
            clauses += [(tantivy.Occur.Should, self._word_query(piece, KOREAN)) for piece in pieces]
        if not clauses:
            return first
        hits = self._searcher.search(tantivy.Query.boolean_query(clauses), limit=limit + 1, count=False).hits
        positions = [(score, int(self._searcher.doc(address)["doc"][0])) for score, address in hits]
        # Equal scores in library order: the index is built on two threads, so segment order varies.
        found = [self._ids[doc] for _, doc in sorted(positions, key=lambda hit: (-round(hit[0], 4), hit[1]))]
        return [*first, *(case_id for case_id in found if case_id not in first)][:limit]


def search_cases(index: CaseSearch, cases: Mapping[str, Case], words: str, limit: int = 8) -> list[Case]:
    return [cases[case_id] for case_id in index.search(words, limit) if case_id in cases]
