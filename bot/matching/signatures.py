"""Compiling case signatures: exact strings and untrusted author regexes through RE2 (linear time), with
the checks that keep one careless or hostile case file from silencing or flooding the bot, and the
automatons (Aho-Corasick for exact strings, RE2 sets for regexes) that find every signature in a text in
one pass each.

Pure: no I/O. ``compile_signature`` raises ``SignatureError`` with the reason; ``SignatureSets`` never
raises, it drops a pattern RE2 cannot fit and says which.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ahocorasick
import re2

from bot.matching.patterns import literal_chars, shape_of
from bot.model.case import Signature, SignatureKind, Strength

# Enough for any sane log signature; bounds RE2's memory per pattern (bytes).
RE2_MAX_MEM = 8 << 20
# The largest compiled program a signature may have (the bundled ones stay under 2,300 instructions).
MAX_PROGRAM_SIZE = 10_000
# Patterns whose estimated size is under this are too small to exceed the budget: parsing them suffices.
_COMPILE_CHECK_ABOVE = 400
# A decisive signature proves the failure on its own, so it must say something specific.
MIN_DECISIVE_LITERALS = 5
MIN_LITERALS = 3
# Patterns per RE2 set, and the memory each set may use. Measured on 40,000 patterns: 400 a set costs
# ~0.5 s over 2 MB, 4,000 ~0.05 s.
SET_SHARD = 4000
SET_MAX_MEM = 256 << 20
_WHITESPACE = re.compile(r"\s{1,10000}")
# A counted repetition {m,n} or {m,} that is not escaped (an escaped brace is a literal one).
_COUNTED = re.compile(r"(?<!\\)\{(\d{1,4}),\d{0,4}\}")


class SignatureError(ValueError):
    """A signature that cannot be used; the message says why."""


def squash(text: str) -> str:
    """Collapse runs of whitespace to one space and strip: how pasted lines and exact patterns compare."""
    return _WHITESPACE.sub(" ", text).strip()


def re2_options(ignore_case: bool = False, max_mem: int = RE2_MAX_MEM) -> Any:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = max_mem
    options.case_sensitive = not ignore_case
    return options


@dataclass(slots=True)
class CompiledSignature:
    """A checked signature. Regexes are parsed at load time and compiled on first use, because a
    library of thousands of cases is matched through RE2 sets and needs few individual programs."""

    case_id: str
    index: int
    kind: SignatureKind
    pattern: str
    strength: Strength
    ignore_case: bool
    fallout: bool
    literal: str
    also: tuple[str, ...] = ()
    note: str = ""  # what the signature means, in words (replies show it, never the pattern)
    _regex: Any = None

    @property
    def decisive(self) -> bool:
        return self.strength is Strength.DECISIVE

    @property
    def is_regex(self) -> bool:
        return self.kind is SignatureKind.REGEX

    @property
    def regex(self) -> Any:
        """The compiled RE2 program (None for exact strings). Checked at load time to fit the budget."""
        if self.kind is not SignatureKind.REGEX:
            return None
        if self._regex is None:
            self._regex = re2.compile(self.pattern, re2_options(self.ignore_case))
        return self._regex

    def set_pattern(self, *, relaxed: bool = False) -> str:
        """This signature as one RE2 pattern over whole, cleaned text.

        ``relaxed`` widens counted repetitions (``{0,200}`` to ``*``, ``{4,16}`` to ``+``): a superset
        that RE2 compiles far faster inside a large set, used only as a prefilter; every hit is then
        confirmed with the exact pattern.
        """
        body = self.pattern if self.is_regex else re2.escape(self.literal)
        if relaxed and self.is_regex:
            body = _COUNTED.sub(lambda m: "*" if m.group(1) == "0" else "+", body)
        flags = "(?mi)" if self.ignore_case else "(?m)"
        return f"{flags}(?:{body})"

    def search(self, line: str) -> bool:
        """True when this signature hits ``line`` (already squashed by the caller)."""
        if self.is_regex:
            return self.regex.search(line) is not None
        if self.ignore_case:
            return self.literal in line.lower()
        return self.literal in line


def _shown(pattern: str) -> str:
    """``pattern`` quoted for a message, cut to 80 characters (a rejected pattern may be kilobytes)."""
    return repr(pattern if len(pattern) <= 80 else pattern[:79] + "…")


def _re2_detail(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else ""
    return detail.decode() if isinstance(detail, bytes) else str(detail or type(exc).__name__)


def _check_regex(where: str, signature: Signature) -> None:
    pattern = signature.pattern
    probe = re2.Set.SearchSet(re2_options(signature.ignore_case))
    try:
        probe.Add(pattern)  # a parse only, an order of magnitude cheaper than compiling
    except re2.error as exc:
        raise SignatureError(f"{where}: RE2 cannot compile {_shown(pattern)}: {_re2_detail(exc)}") from None
    shape = shape_of(pattern)
    if shape.length == 0:
        raise SignatureError(f"{where}: {_shown(pattern)} can match an empty string, so it would hit every paste")
    if signature.strength is Strength.DECISIVE and shape.literals < MIN_DECISIVE_LITERALS:
        raise SignatureError(
            f"{where}: {_shown(pattern)} has only {shape.literals} literal characters; a decisive signature proves "
            f"the failure on its own and needs at least {MIN_DECISIVE_LITERALS}"
        )
    if shape.size > _COMPILE_CHECK_ABOVE:
        try:
            program = re2.compile(pattern, re2_options(signature.ignore_case)).programsize
        except re2.error as exc:
            raise SignatureError(
                f"{where}: {_shown(pattern)} is too large for RE2's budget ({RE2_MAX_MEM >> 20} MiB): "
                f"{_re2_detail(exc)}"
            ) from None
        if program > MAX_PROGRAM_SIZE:
            raise SignatureError(
                f"{where}: {_shown(pattern)} compiles to {program} instructions, over the limit of {MAX_PROGRAM_SIZE}"
            )


def _check_also(where: str, signature: Signature) -> list[str]:
    """The co-occurrence patterns, each held to a regex signature's rules (a hint's, not a proof's)."""
    for number, pattern in enumerate(signature.also):
        probe = Signature(kind=SignatureKind.REGEX, pattern=pattern, strength=Strength.SUPPORTING)
        _check_regex(f"{where}.also[{number}]", probe)
    return list(signature.also)


def compile_signature(case_id: str, index: int, signature: Signature) -> CompiledSignature:
    """Check one signature. Raises ``SignatureError`` naming the case, the signature and the reason."""
    where = f"{case_id} signatures[{index}]"
    literal = squash(signature.pattern)
    if signature.kind is SignatureKind.REGEX:
        _check_regex(where, signature)
    else:
        count = literal_chars(literal)
        needed = MIN_DECISIVE_LITERALS if signature.strength is Strength.DECISIVE else MIN_LITERALS
        if count < needed:
            kind = "a decisive" if signature.strength is Strength.DECISIVE else "an"
            raise SignatureError(
                f"{where}: {_shown(signature.pattern)} has {count} characters after squashing whitespace; "
                f"{kind} exact signature needs at least {needed}"
            )
        if signature.ignore_case:
            literal = literal.lower()
    return CompiledSignature(
        case_id=case_id,
        index=index,
        kind=signature.kind,
        pattern=signature.pattern,
        strength=signature.strength,
        ignore_case=signature.ignore_case,
        fallout=signature.fallout,
        literal=literal,
        also=tuple(_check_also(where, signature)),
        note=" ".join((signature.note or "").split()),
    )


class LazySignatures(Sequence[CompiledSignature]):
    """Checked signatures kept as the rows a snapshot saved, each made a :class:`CompiledSignature` when
    first used (a large library has tens of thousands; a paste touches few). ``facts`` tells the automatons
    what they need without making any."""

    def __init__(self, rows: Sequence[tuple[str, Sequence[Any]]], make: Any) -> None:
        """``rows``: (case id, saved row) in order; ``make(case_id, row)`` builds one signature."""
        self._rows = rows
        self._make = make
        self._made: list[CompiledSignature | None] = [None] * len(rows)

    def facts(self, index: int) -> tuple[bool, str, bool]:
        """(is a regex, literal, ignore case) of signature ``index``: rows are (index, kind, pattern,
        strength, ignore_case, fallout, literal, also)."""
        row = self._rows[index][1]
        return row[1] == SignatureKind.REGEX.value, str(row[6]), bool(row[4])

    def __getitem__(self, index: int) -> CompiledSignature:  # type: ignore[override]
        made = self._made[index]
        if made is None:
            case_id, row = self._rows[index]
            made = self._made[index] = self._make(case_id, row)
        return made

    def __len__(self) -> int:
        return len(self._rows)


@dataclass(frozen=True, slots=True)
class Dropped:
    """A signature that RE2 could not fit into any set: never used, and reported."""

    signature: CompiledSignature
    reason: str


@dataclass
class SignatureSets:
    """Which signatures may hit a text, found in one pass per automaton, never one pattern at a time:
    exact strings in two Aho-Corasick automatons (case-sensitive ones over the text, the others over it
    lower-cased), regexes in RE2 sets of at most ``shard`` patterns. A set RE2 cannot compile within
    ``max_mem`` is split in halves until it does; a single pattern that still does not fit is dropped
    (listed in ``dropped``), never raised."""

    signatures: Sequence[CompiledSignature]
    shard: int = SET_SHARD
    max_mem: int = SET_MAX_MEM
    sets: list[tuple[Any, list[int]]] = field(default_factory=list, init=False)
    dropped: list[Dropped] = field(default_factory=list, init=False)
    _exact: Any = field(default=None, init=False)
    _folded: Any = field(default=None, init=False)

    def __post_init__(self) -> None:
        facts = getattr(self.signatures, "facts", None)
        if facts is None:
            facts = [(sig.is_regex, sig.literal, sig.ignore_case) for sig in self.signatures].__getitem__
        known = [facts(i) for i in range(len(self.signatures))]
        regexes = [i for i, (regex, _, _) in enumerate(known) if regex]
        self._exact = _automaton(
            (literal, i) for i, (regex, literal, fold) in enumerate(known) if not regex and not fold
        )
        self._folded = _automaton((literal, i) for i, (regex, literal, fold) in enumerate(known) if not regex and fold)
        pending = [regexes[i : i + self.shard] for i in range(0, len(regexes), self.shard)]
        while pending:
            members = pending.pop()
            built = self._build(members)
            if built is not None:
                self.sets.append((built, members))
            elif len(members) > 1:
                half = len(members) // 2
                pending.extend([members[:half], members[half:]])
            else:
                sig = self.signatures[members[0]]
                self.dropped.append(Dropped(sig, f"RE2 cannot fit {sig.pattern!r} into a set of {self.max_mem} bytes"))

    def _build(self, members: list[int]) -> Any | None:
        regex_set = re2.Set.SearchSet(re2_options(max_mem=self.max_mem))
        try:
            for index in members:
                try:
                    regex_set.Add(self.signatures[index].set_pattern(relaxed=True))
                except re2.error:  # the widened form must never cost a signature: fall back to the exact one
                    regex_set.Add(self.signatures[index].set_pattern())
            regex_set.Compile()
        except re2.error:
            return None
        return regex_set

    def candidates(self, text: str) -> list[int]:
        """Indices of signatures that may hit ``text``: confirm each with its own program (which also
        finds its lines) before trusting it."""
        found: set[int] = set()
        for automaton, haystack in ((self._exact, text), (self._folded, None)):
            if automaton is not None:
                found.update(index for _, index in automaton.iter(haystack if haystack is not None else text.lower()))
        for regex_set, members in self.sets:
            found.update(members[position] for position in regex_set.Match(text) or ())
        return sorted(found)


def _automaton(words: Any) -> Any | None:
    """An Aho-Corasick automaton over ``(word, index)`` pairs (None without any)."""
    automaton = ahocorasick.Automaton()
    for word, index in words:
        if word:
            previous = automaton.get(word, ())
            automaton.add_word(word, (*previous, index) if previous else (index,))
    if len(automaton) == 0:
        return None
    automaton.make_automaton()
    return _Expanded(automaton)


@dataclass(frozen=True, slots=True)
class _Expanded:
    """An automaton whose values are tuples of indices (several signatures may share one string)."""

    automaton: Any

    def iter(self, text: str) -> Any:
        for end, indices in self.automaton.iter(text):
            for index in indices:
                yield end, index


def also_programs(signature: CompiledSignature) -> list[Any] | None:
    """The co-occurrence patterns compiled for whole text; None when one does not fit RE2's budget."""
    programs = []
    for pattern in signature.also:
        try:
            programs.append(re2.compile(f"(?m){pattern}", re2_options(signature.ignore_case)))
        except re2.error:
            return None
    return programs


def locator(signature: CompiledSignature) -> Any | None:
    """The program that finds ``signature`` in whole, cleaned text (multi-line); None when it does not fit
    RE2's budget (load-time checks make that rare; matching then skips the signature)."""
    try:
        return re2.compile(signature.set_pattern(), re2_options())
    except re2.error:
        return None


def _hit_line(program: Any, text: str) -> str | None:
    found = program.search(text)
    if found is None:
        return None
    start = text.rfind("\n", 0, found.start()) + 1
    end = text.find("\n", found.end())
    return text[start : end if end != -1 else len(text)].strip()


# A supporting signature may hit this many lines of the hard negatives (real errors no case explains) and
# no more: ``Traceback (most recent call last)`` hits 5, ``Error: `` 27; the bundled hints hit at most 2 and a
# specific hint for a failure no case explains yet (``CUDA out of memory``) 3.
MAX_NEGATIVE_HITS = 4


def screen(sets: SignatureSets, ordinary: str, hard_negatives: str) -> dict[int, str]:
    """Signatures that must not be used, by index, with the reason: any that hits ``ordinary`` text
    (everyday chat, healthy training logs), any decisive one that hits ``hard_negatives`` (real errors no
    case explains), and any supporting one that hits more than ``MAX_NEGATIVE_HITS`` of their lines (a
    hint every traceback has). Each candidate from the sets is confirmed with its own program."""
    rejected: dict[int, str] = {}
    for index in sorted(set(sets.candidates(ordinary))):
        program = locator(sets.signatures[index])
        line = _hit_line(program, ordinary) if program is not None else None
        if line is not None:
            rejected[index] = f"hits ordinary text, so it would answer unrelated messages: {line[:120]!r}"
    negative_lines: list[str] | None = None
    for index in sorted(set(sets.candidates(hard_negatives)) - set(rejected)):
        sig = sets.signatures[index]
        program = locator(sig)
        if program is None:
            continue
        if sig.decisive:
            line = _hit_line(program, hard_negatives)
            if line is not None:
                rejected[index] = (
                    f"is decisive but hits a real error that no case explains: {line[:120]!r} "
                    "(make it more specific, or supporting)"
                )
            continue
        if negative_lines is None:
            negative_lines = [line for line in hard_negatives.splitlines() if line.strip()]
        hits = [line for line in negative_lines if program.search(line)]
        if len(hits) > MAX_NEGATIVE_HITS:
            rejected[index] = (
                f"is generic: it hits {len(hits)} of {len(negative_lines)} real errors that no case explains, "
                f"such as {hits[0][:120]!r} (a hint may hit at most {MAX_NEGATIVE_HITS}: make it specific)"
            )
    return rejected
