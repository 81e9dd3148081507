"""Topics: the library's vocabulary (failure classes, components, root-cause categories, symptom tags) with
counts and aliases, normalized through ``topics.tsv`` so that ``ecc``, ``gpu-ecc``, ``hbm3`` and ``gpu-hbm``
meet under one topic. ``/incident topic nccl``, ``incident-bot topics`` and the MCP server read it.

A word names a topic when it is a topic's name or alias, or one of the hyphen-separated words of a name
(``nccl`` names ``nccl-hang-timeout`` and ``nccl-bootstrap-network``); ``class:``, ``component:``,
``cause:`` and ``symptom:`` narrow it to one kind.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Protocol

from rapidfuzz import fuzz, process

from bot.library.case_store import Problem

KINDS = ("class", "component", "cause", "symptom")
PREFIXES = {f"{kind}:": kind for kind in KINDS}


@dataclass(frozen=True)
class Aliases:
    """kind -> alias -> topic."""

    table: Mapping[str, Mapping[str, str]]

    def topic(self, kind: str, value: str) -> str:
        return self.table.get(kind, {}).get(value, value)

    def of(self, kind: str, topic: str) -> list[str]:
        return sorted(alias for alias, name in self.table.get(kind, {}).items() if name == topic)


def parse_aliases(text: str) -> tuple[Aliases, list[str]]:
    """The alias table and what is wrong with it (an alias that is also a topic, or of two topics)."""
    table: dict[str, dict[str, str]] = defaultdict(dict)
    problems: list[str] = []
    topics: dict[str, set[str]] = defaultdict(set)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[0] not in KINDS:
            problems.append(f"line {number}: expected kind<TAB>topic<TAB>aliases with kind one of {', '.join(KINDS)}")
            continue
        kind, topic, aliases = parts[0], parts[1].strip(), parts[2]
        topics[kind].add(topic)
        for alias in (a.strip() for a in aliases.split(",")):
            if not alias:
                continue
            if alias in table[kind] and table[kind][alias] != topic:
                problems.append(f"line {number}: {kind} alias {alias!r} already belongs to {table[kind][alias]!r}")
                continue
            table[kind][alias] = topic
    for kind, names in topics.items():
        for alias in sorted(set(table[kind]) & names):
            problems.append(f"{kind} {alias!r} is both a topic and an alias of {table[kind][alias]!r}")
    return Aliases({k: dict(v) for k, v in table.items()}), problems


@cache
def aliases() -> Aliases:
    text = resources.files("bot.library").joinpath("topics.tsv").read_text(encoding="utf-8")
    return parse_aliases(text)[0]


def alias_problems() -> list[Problem]:
    """``cases validate``: the shipped alias table's problems (errors)."""
    text = resources.files("bot.library").joinpath("topics.tsv").read_text(encoding="utf-8")
    return [Problem("bot/library/topics.tsv", "", message) for message in parse_aliases(text)[1]]


def _stem(word: str) -> str:
    """A word without the plural or participle ending that makes two topic names look different:
    images -> image, stalled -> stall, loading -> load."""
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def near_key(name: str) -> str:
    """What two near-duplicate topic names share (``container-image`` and ``container-images``)."""
    return "-".join(_stem(part) for part in re.split(r"[-_ ]+", name.lower()) if part)


def near_duplicate_problems(vocabulary: Vocabulary) -> list[Problem]:
    """``cases validate``: warnings for topics of one kind whose names differ only by an ending (each is
    merged by a line in ``bot/library/topics.tsv``)."""
    problems = []
    for kind in KINDS:
        groups: dict[str, list[Topic]] = defaultdict(list)
        for topic in vocabulary.by_kind(kind):
            groups[near_key(topic.name)].append(topic)
        for group in groups.values():
            if len(group) > 1:
                names = ", ".join(f"{t.name} ({', '.join(t.cases)})" for t in group)
                problems.append(
                    Problem(
                        "bot/library/topics.tsv",
                        kind,
                        f"near-duplicate topics {names}: use one name, or add the other as its alias",
                        "warning",
                    )
                )
    return problems


class Tagged(Protocol):
    """What a case (or its summary) says about itself; both have these fields."""

    @property
    def id(self) -> str: ...
    @property
    def failure_class(self) -> str | None: ...
    @property
    def components(self) -> Sequence[str]: ...
    @property
    def root_cause(self) -> str | None: ...
    @property
    def symptoms(self) -> Sequence[str]: ...


def values_of(case: Tagged) -> Iterable[tuple[str, str]]:
    """(kind, raw value) of everything a case is tagged with."""
    if case.failure_class:
        yield "class", case.failure_class
    for component in case.components:
        yield "component", component
    if case.root_cause and case.root_cause != "unknown":
        yield "cause", case.root_cause
    for symptom in case.symptoms:
        yield "symptom", symptom


@dataclass(frozen=True)
class Topic:
    kind: str
    name: str
    cases: tuple[str, ...]
    aliases: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass
class Vocabulary:
    """Every topic of a library, by kind, with the cases under it."""

    topics: dict[str, Topic] = field(default_factory=dict)  # "kind:name" -> topic

    @classmethod
    def of(cls, cases: Iterable[Tagged], table: Aliases | None = None) -> Vocabulary:
        table = table or aliases()
        members: dict[tuple[str, str], list[str]] = defaultdict(list)
        for case in cases:
            for kind, value in values_of(case):
                key = (kind, table.topic(kind, value))
                if case.id not in members[key]:
                    members[key].append(case.id)
        topics = {
            f"{kind}:{name}": Topic(kind, name, tuple(ids), tuple(table.of(kind, name)))
            for (kind, name), ids in sorted(members.items())
        }
        return cls(topics)

    def by_kind(self, kind: str) -> list[Topic]:
        """The topics of ``kind``, most cases first, then by name."""
        found = [t for t in self.topics.values() if t.kind == kind]
        return sorted(found, key=lambda t: (-len(t.cases), t.name))

    def resolve(self, words: str) -> list[Topic]:
        """The topics ``words`` names (see the module's docstring); [] when none."""
        text = words.strip().lower()
        kind = None
        for prefix, named in PREFIXES.items():
            if text.startswith(prefix):
                kind, text = named, text[len(prefix) :].strip()
        if not text:
            return []
        found = []
        for topic in self.topics.values():
            if kind is not None and topic.kind != kind:
                continue
            if text == topic.name or text in topic.aliases or text in topic.name.split("-"):
                found.append(topic)
        return found

    def closest(self, words: str, limit: int = 5) -> list[Topic]:
        """The topics nearest to an unknown word (by name and alias spelling)."""
        text = words.strip().lower().split(":", 1)[-1]
        names: dict[str, Topic] = {}
        for topic in self.topics.values():
            names.setdefault(topic.name, topic)
            for alias in topic.aliases:
                names.setdefault(alias, topic)
        picked = process.extract(text, list(names), scorer=fuzz.WRatio, limit=limit * 2)
        unique: dict[str, Topic] = {}
        for name, _, _ in picked:
            unique.setdefault(names[name].key, names[name])
        return list(unique.values())[:limit]

    def cases_of(self, topics: Iterable[Topic]) -> list[str]:
        return list(dict.fromkeys(case_id for topic in topics for case_id in topic.cases))
