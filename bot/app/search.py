"""``/incident search WORDS``: cases ranked by where the words appear. Pure.

A word in the id counts most, then in the failure class, the components, the title (either language), and
last anywhere in the body (summary, symptoms, root cause, lessons); a code such as ``Xid 79`` counts like
the class wherever it appears. Rare words weigh more than common ones.
Korean words are also compared by their two-syllable pieces, so ``메모리`` finds ``메모리가`` and
``공유메모리``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.matching.textindex import tokenize
from bot.model.case import Case
from bot.model.ids import canonical_id

# How much one word is worth in each field; the body's worth also grows with how often it says it.
ID_WEIGHT = 20.0
CLASS_WEIGHT = 8.0
COMPONENT_WEIGHT = 6.0
TITLE_WEIGHT = 4.0
BODY_WEIGHT = 1.5
_HANGUL = re.compile(r"[\uac00-\ud7a3]{2,40}")
_QUERY_WORDS = 40
_CODE = re.compile(r"[a-z]{2,20}_\d{1,3}")


def terms(text: str) -> set[str]:
    """The search terms of ``text``: the matcher's log-aware tokens, plus two-syllable pieces of Korean."""
    found = set(tokenize(text, limit=20_000))
    for word in _HANGUL.findall(text):
        found.update(word[i : i + 2] for i in range(len(word) - 1))
    return found


def _body_counts(text: str) -> Counter[str]:
    counts: Counter[str] = Counter(tokenize(text, limit=20_000))
    for word in _HANGUL.findall(text):
        counts.update(word[i : i + 2] for i in range(len(word) - 1))
    return counts


def _both(*texts: object) -> str:
    parts: list[str] = []
    for text in texts:
        get = getattr(text, "get", None)
        parts += [get("en") or "", get("ko") or ""] if get else [str(text or "")]
    return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class _Fields:
    case_id: str
    ids: frozenset[str]
    failure_class: frozenset[str]
    components: frozenset[str]
    title: frozenset[str]
    body: Counter[str]


class CaseSearch:
    """Built once per library snapshot; ``search`` is thread-safe."""

    def __init__(self, cases: Iterable[Case]) -> None:
        self._fields: list[_Fields] = []
        document_terms: Counter[str] = Counter()
        for case in cases:
            body = _both(case.summary, case.symptoms_text, case.trigger, case.detection, case.lessons)
            body += "\n" + "\n".join([*case.symptoms, case.root_cause or "", case.org or ""])
            fields = _Fields(
                case_id=case.id,
                ids=frozenset({case.id.lower(), *terms(case.id)}),
                failure_class=frozenset(terms(case.failure_class or "")),
                components=frozenset(terms(" ".join(case.components))),
                title=frozenset(terms(_both(case.title))),
                body=_body_counts(body),
            )
            self._fields.append(fields)
            document_terms.update(
                fields.ids | fields.failure_class | fields.components | fields.title | set(fields.body)
            )
        count = max(1, len(self._fields))
        self._idf = {term: math.log(1 + (count - df + 0.5) / (df + 0.5)) for term, df in document_terms.items()}

    def search(self, words: str, limit: int = 8) -> list[str]:
        """Case ids, best first; only cases that contain at least one of the words."""
        wanted = canonical_id(words.strip())
        query = list(dict.fromkeys(tokenize(words, limit=_QUERY_WORDS)))
        for word in _HANGUL.findall(words[:400]):
            query += [word[i : i + 2] for i in range(len(word) - 1)]
        scores: dict[str, float] = {}
        for fields in self._fields:
            score = ID_WEIGHT * 10 if wanted is not None and wanted == fields.case_id else 0.0
            for term in query:
                idf = self._idf.get(term)
                if idf is None:
                    continue
                tf = fields.body.get(term, 0)
                weight = max(
                    ID_WEIGHT if term in fields.ids else 0.0,
                    CLASS_WEIGHT if term in fields.failure_class else 0.0,
                    COMPONENT_WEIGHT if term in fields.components else 0.0,
                    TITLE_WEIGHT if term in fields.title else 0.0,
                    BODY_WEIGHT * tf / (tf + 1.0),
                    # A code (``xid_79``) names one fault: anywhere in the case, it counts like the class.
                    CLASS_WEIGHT if tf and _CODE.fullmatch(term) else 0.0,
                )
                score += weight * idf
            if score > 0:
                scores[fields.case_id] = score
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return [case_id for case_id, _ in ranked[:limit]]


def search_cases(index: CaseSearch, cases: Mapping[str, Case], words: str, limit: int = 8) -> list[Case]:
    return [cases[case_id] for case_id in index.search(words, limit) if case_id in cases]
