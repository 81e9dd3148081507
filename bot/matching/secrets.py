"""Credentials in a line, found by gitleaks' rule set (``bot/matching/gitleaks/``: its ``config/gitleaks.toml``,
MIT-licensed, vendored with its version, and the same rules as Python data in ``bot.matching.gitleaks_rules``;
``tools/refresh_gitleaks.py`` replaces both with a newer release). Pure; compiled once.

gitleaks' rules are written for Go's RE2 and run here under RE2 too (``google-re2``): linear time whatever
the line. Each rule is applied as gitleaks applies it: only when one of its keywords is in the line, the
secret is its ``secretGroup`` (else the first non-empty group, else the whole match), a secret at or below
the rule's entropy is not one, and the global and the rule's allowlists (regexes on the secret, match or
line, and stop words) let a finding go. Path and commit allowlists do not apply to a pasted line.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import re2

from bot.matching import gitleaks_rules


@dataclass(frozen=True, slots=True)
class _Allow:
    target: str  # secret | match | line
    regexes: tuple[Any, ...]
    stopwords: tuple[str, ...]
    every: bool  # condition AND: every listed check must allow

    def allows(self, secret: str, match: str, line: str) -> bool:
        text = {"match": match, "line": line}.get(self.target, secret)
        checks = []
        if self.regexes:
            checks.append(any(r.search(text) for r in self.regexes))
        if self.stopwords:
            lowered = secret.lower()
            checks.append(any(word in lowered for word in self.stopwords))
        return bool(checks) and (all(checks) if self.every else any(checks))


@dataclass(frozen=True, slots=True)
class SecretRule:
    id: str
    regex: Any
    keywords: tuple[str, ...]
    entropy: float
    group: int
    allow: tuple[_Allow, ...]


def _allow(data: dict[str, Any]) -> _Allow | None:
    """An allowlist, or None when it needs a path or a commit (which a pasted line does not have)."""
    every = str(data.get("condition", "OR")).upper() == "AND"
    if every and (data.get("paths") or data.get("commits")):
        return None
    regexes = tuple(re2.compile(pattern) for pattern in data.get("regexes", []))
    stopwords = tuple(str(word).lower() for word in data.get("stopwords", []))
    if not regexes and not stopwords:
        return None
    return _Allow(str(data.get("regexTarget", "secret")), regexes, stopwords, every)


def _rule(data: dict[str, Any]) -> SecretRule | None:
    if "regex" not in data:
        return None  # a rule on file paths only (pkcs12-file)
    allow = tuple(a for a in (_allow(entry) for entry in data.get("allowlists", [])) if a is not None)
    return SecretRule(
        str(data["id"]),
        re2.compile(data["regex"]),
        tuple(str(k).lower() for k in data.get("keywords", [])),
        float(data.get("entropy", 0.0)),
        int(data.get("secretGroup", 0)),
        allow,
    )


@cache
def rules() -> tuple[tuple[SecretRule, ...], tuple[_Allow, ...]]:
    """The rules and the global allowlists of the vendored rule set (compiled once)."""
    found = tuple(r for r in (_rule(entry) for entry in gitleaks_rules.RULES) if r is not None)
    shared = tuple(a for a in (_allow(entry) for entry in gitleaks_rules.GLOBAL_ALLOWLISTS) if a is not None)
    return found, shared


def rules_version() -> str:
    """What the vendored rule set is (release and commit)."""
    return gitleaks_rules.VERSION


def entropy(text: str) -> float:
    """Shannon entropy in bits per character, as gitleaks computes it."""
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _secret_span(rule: SecretRule, found: Any) -> tuple[int, int]:
    groups = found.groups()
    number = 0
    if groups and rule.group > 0:
        number = rule.group if rule.group <= len(groups) else 0
    elif groups:
        number = next((n for n, value in enumerate(groups, start=1) if value), 0)
    start, end = found.span(number)
    return int(start), int(end)


def secrets_in(line: str) -> Iterator[tuple[str, int, int]]:
    """(rule id, start, end) of each credential in ``line``, as gitleaks would report it."""
    found_rules, shared = rules()
    lowered = line.lower()
    for rule in found_rules:
        if rule.keywords and not any(word in lowered for word in rule.keywords):
            continue
        for found in rule.regex.finditer(line):
            start, end = _secret_span(rule, found)
            secret, match = line[start:end], found.group(0)
            if not secret or (rule.entropy and entropy(secret) <= rule.entropy):
                continue
            if any(a.allows(secret, match, line) for a in (*shared, *rule.allow)):
                continue
            yield rule.id, start, end


def redact_secrets(line: str, placeholder: str = "<redacted>") -> str:
    """``line`` with every credential ``secrets_in`` finds replaced by ``placeholder``."""
    spans = sorted((start, end) for _, start, end in secrets_in(line))
    if not spans:
        return line
    out, last = [], 0
    for start, end in spans:
        if start < last:  # overlapping findings: the first one already covers it
            start = last
        if start < end:
            out += [line[last:start], placeholder]
            last = end
    return "".join(out) + line[last:]
