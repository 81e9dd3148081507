"""Confirmed examples: the lines of a paste a person confirmed as a case, as evidence for the matcher. Pure.

A Helpful vote (or a pick in Other matches) stores the paste's matched and error-looking lines for the
case, redacted (:func:`redact`) and screened (:func:`refusal`). Back in the matcher's text stage
(:func:`example_lines`) a near-copy of a line one person confirmed is a hint for that case (a candidate,
never a reply on its own); a line two different people, or one reviewer, confirmed counts as a near-copy
of a decisive example (a strong match, which may be replied to). Never ``exact``: that takes a signature.
Lines are compared by their masked form (numbers as 0): the same failure on another rank, device or
address is the same line.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from rapidfuzz import fuzz, process

from bot.matching.knownlines import XID_CODE, KnownLine, mask
from bot.matching.ranking import MatchConfig
from bot.matching.signatures import squash
from bot.matching.suspects import extract_suspects, is_host
from bot.model.case import Strength
from bot.model.results import MatchResult

LINES_KEPT = 6  # lines stored per confirmation
LINE_CHARS = 300
MIN_CHARS = 20  # shorter lines say too little ("Killed", "ok thanks")
ORDINARY_SIMILARITY = 85  # a line this close to an everyday or healthy line is refused
# A line must name at least this many things beyond the generic vocabulary (see ``Ordinary.specific``):
# "Segmentation fault (core dumped)" or "ERROR: job failed with exit code 1" name none.
MIN_SPECIFIC = 2
# A word in at least this share of the case texts (and at least COMMON_FLOOR of them) is common to many
# failures, so it tells none of them apart.
COMMON_SHARE = 0.25
COMMON_FLOOR = 3
NEAR_SIMILARITY = MatchConfig().fuzzy_floor  # what the matcher's text stage calls a near-copy
NEAR_COVERAGE = 0.6

_ERRORISH = re.compile(
    r"error|fail|fatal|exception|timed? ?out|killed|abort|terminat|xid|panic|unable|cannot|invalid|unexpected"
    r"|lost|exceeded|refused|\bnan\b|segmentation|core dumped|oom|sig(?:kill|term|bus|abrt)|exit ?code|mismatch"
    r"|insufficient|not (?:found|ready|initialized)",
    re.IGNORECASE,
)
# The error vocabulary itself, as words ("failed", "errors", "aborted", "timeout"): what makes a line look
# like an error says nothing about which one.
_ERROR_WORD = re.compile(rf"(?:{_ERRORISH.pattern})[a-z]{{0,4}}", re.IGNORECASE)
# English function words: they carry no evidence whatever the corpus says.
_FUNCTION_WORDS = frozenset(
    """
    about above across after again against all almost also although always among and another any anyone
    anything are around because been before being below between both but can could did does doing done
    down during each either else enough even ever every everyone everything few for from further had has
    have having her here hers herself him himself his how however into its itself just least less many
    may might more most much must neither never nobody none nor not nothing now off once one only onto
    other others our ours ourselves out over own per please rather same several shall she should since
    some someone something somewhere still such than that the their theirs them themselves then there
    these they this those though through thus too toward under until upon very was were what whatever
    when whenever where whether which while who whoever whom whose why will with within without would yet
    you your yours yourself
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_WORD = re.compile(r"(?<![a-z0-9])[a-z][a-z0-9]{2,}")
PLACEHOLDERS = ("<host>", "<ip>", "<email>", "<user>", "<redacted>")
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS))

# Key names whose values are redacted (a pattern, not a password), with any prefix and suffix joined by
# ``_ . -``: DB_PASSWORD, WANDB_API_KEY, aws_secret_access_key, hf-token; not "tokenizer" or "Unauthorized".
_NAMES = r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth)"
_SENSITIVE_KEY = rf"(?:[\w.-]{{0,40}}?[_.-]|pg|mysql|mongo|redis)?{_NAMES}(?:[_.-][\w-]{{0,20}})?"
# The public suffixes a fully qualified host name ends in: the common generic and internal ones and the
# country codes, except those that are also file extensions in logs (.py .sh .so .rs .md .cc .pl .pm .in
# .am .ac .pt .tf .cu .cl .mo .nc .mm .mk .ps .ml): ``torch.cuda.OutOfMemoryError`` or ``config.h.in``
# are not hosts.
_TLDS = frozenset(
    """
    com net org edu gov mil int io ai dev app cloud info biz tech online site xyz local localdomain internal
    intranet lan corp home arpa example test invalid cluster svc priv private
    ad ae af ag al ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bw by bz ca cd
    cf cg ch ci ck cm cn co cr cv cw cx cy cz de dj dk dm do dz ec ee eg er es et eu fi fj fk fm fo fr ga
    gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im iq ir is it je jm jo
    jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc me mg mh mm mn mp mq mr ms
    mt mu mv mw mx my mz na ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pn pr pw qa re ro ru rw sa
    sb sc sd se sg si sk sl sm sn sr ss st sv sx sy sz tc td tg th tj tk tl tm tn to tr tt tv tw tz ua ug
    uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_FQDN = re.compile(
    r"(?<![\w.-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.){1,}([a-z]{2,24})(?![\w-]|\.[a-z0-9]|\()",
    re.IGNORECASE,
)

# What is redacted before a line is stored or put in a button value, in this order.
_REDACTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Credentials in URLs: scheme://user:password@host
    (re.compile(r"\b([a-z][a-z0-9+.-]{1,20}://)[^\s/:@]{0,200}:[^\s/@]{1,200}@"), r"\1<user>:<redacted>@"),
    # Slack webhook and workflow URLs (the path is the secret), presigned S3 and GCS URLs' signatures
    (re.compile(r"(hooks\.slack\.com/)(?:services|workflows|triggers)/[^\s\"'<>]{1,300}"), r"\1<redacted>"),
    (
        re.compile(r"\b(X-(?:Amz|Goog)-(?:Signature|Credential|Security-Token)=)[^&\s\"']{1,3000}", re.IGNORECASE),
        r"\1<redacted>",
    ),
    # An Authorization header, whatever its scheme (Basic, Bearer, Digest, a bare key)
    (
        re.compile(
            r"\b((?:proxy-)?authorization[\"']?\s{0,3}[=:]\s{0,3}[\"']?)"
            r"(?:(?:basic|bearer|digest|token|negotiate|ntlm|apikey|aws4-hmac-sha256)\s{1,3})?[^\s\"',;]{1,500}",
            re.IGNORECASE,
        ),
        r"\1<redacted>",
    ),
    (re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE), r"\1 <redacted>"),
    # key=value, key: value, "key": "value" for secret-looking keys, also with a prefix (DB_PASSWORD,
    # WANDB_API_KEY, aws_secret_access_key)
    (
        re.compile(
            rf"\b({_SENSITIVE_KEY}[\"']?\s{{0,3}}[=:]\s{{0,3}})"
            r"(?:\"[^\"\n]{0,300}\"|'[^'\n]{0,300}'|[^\s\"',;]{1,300})",
            re.IGNORECASE,
        ),
        r"\1<redacted>",
    ),
    # command-line flags: --password hunter2, --hf-token hf_…
    (
        re.compile(rf"((?<!\S)--?{_SENSITIVE_KEY}\s{{1,3}})(?![-<])\S{{1,300}}", re.IGNORECASE),
        r"\1<redacted>",
    ),
    # Known token shapes: Slack, GitHub, AWS access keys, OpenAI-style and Hugging Face keys, JWTs
    (
        re.compile(
            r"\b(?:xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|gh[pousr]_[A-Za-z0-9]{20,}"
            r"|AKIA[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_-]{20,}"
            r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"
        ),
        "<redacted>",
    ),
    (re.compile(r"\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,200}\.[A-Za-z]{2,20}\b"), "<email>"),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"), "<ip>"),
)


_MAX_HOSTS = 64  # host names replaced in one line (a line naming more is cut at MAX_LINE_CHARS anyway)


def looks_like_error(line: str) -> bool:
    """Whether ``line`` reads like an error (not a progress or start-up line)."""
    return _ERRORISH.search(line) is not None


# A two-label name (``mlflow.internal``, ``acme-corp.com``) is a host only under these suffixes: with the
# others it is as often code (``np.int``, ``self.io``).
_TWO_LABEL_TLDS = frozenset(
    ["com", "net", "org", "edu", "gov", "internal", "local", "lan", "corp", "home", "intra", "cluster"]
)


def _fqdn(found: re.Match[str]) -> str:
    tld = found.group(1).lower()
    two_labels = found.group(0).count(".") == 1
    return "<host>" if tld in (_TWO_LABEL_TLDS if two_labels else _TLDS) else found.group(0)


_SLURM_ON = re.compile(r"\*\*\* (?:JOB|STEP) \d{1,12}(?:\.\w{1,20})? ON ([A-Za-z][\w.-]{0,100}) ")


def hosts_in(lines: Iterable[str]) -> set[str]:
    """The host names ``lines`` show where logs name a host (a syslog line's host, an NCCL or pdsh
    prefix, ``[host]:``, srun's task and node-failure lines): the suspects extraction, line by line."""
    found: set[str] = set()
    for line in lines:
        # Slurm's batch host (``*** JOB 42 ON gpu-b07 CANCELLED``): not a suspect, but a name all the same.
        found.update(m.group(1) for m in _SLURM_ON.finditer(line) if is_host(m.group(1)))
        found.update(host for host, _ in extract_suspects([line], [0], failed=True).hosts)
    return found


def redact(line: str, hosts: Iterable[str] = ()) -> str:
    """``line`` with credentials, e-mail addresses, IP addresses and host names replaced by placeholders:
    ``hosts`` (the paste's suspects), the hosts the line itself names in a host position (``hosts_in``)
    and any fully qualified name with a real top-level domain."""
    lower = line.lower()
    # Only the names this line contains (a paste may name thousands of hosts), as one alternation.
    names = {h for h in [*hosts, *hosts_in([line])] if len(h) >= 2 and h.lower() in lower}
    text = line
    for pattern, replacement in _REDACTIONS:
        text = pattern.sub(replacement, text)
    text = _FQDN.sub(_fqdn, text)
    if names:
        either = "|".join(re.escape(host) for host in sorted(names, key=len, reverse=True)[:_MAX_HOSTS])
        text = re.sub(rf"(?<![A-Za-z0-9-])(?:{either})(?![A-Za-z0-9-])", "<host>", text, flags=re.IGNORECASE)
    return text


def words(text: str) -> set[str]:
    """The words of ``text`` as the screen counts them: lower case, three characters or more, starting
    with a letter (``gpu-doctor`` is ``gpu`` and ``doctor``); placeholders are not words."""
    return set(_WORD.findall(_PLACEHOLDER.sub(" ", text.lower())))


def common_words(texts: Iterable[str], share: float = COMMON_SHARE, floor: int = COMMON_FLOOR) -> frozenset[str]:
    """The words found in at least ``share`` of ``texts`` (and in at least ``floor`` of them)."""
    counts: Counter[str] = Counter()
    total = 0
    for text in texts:
        total += 1
        counts.update(words(text))
    needed = max(floor, math.ceil(share * total))
    return frozenset(word for word, count in counts.items() if count >= needed)


@dataclass(frozen=True)
class Ordinary:
    """The ordinary text that guards signatures (everyday chat, healthy training lines, hard-negative
    lines: ``bot.library.ordinary``), masked, and the generic vocabulary for :func:`refusal`: every word of
    that text, the words ``common`` to many case texts (:func:`common_words`), the error vocabulary and
    English function words."""

    text: str
    common: frozenset[str] = frozenset()
    lines: tuple[str, ...] = field(init=False, repr=False)
    vocabulary: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        kept = [line for line in self.text.splitlines() if len(line.strip()) >= 8]
        object.__setattr__(self, "lines", tuple(mask(squash(line)) for line in kept))
        object.__setattr__(self, "vocabulary", frozenset(words(self.text)) | _FUNCTION_WORDS)

    def with_common(self, common: frozenset[str]) -> Ordinary:
        """This screen with ``common`` as the case texts' common words."""
        return self if common == self.common else replace(self, common=common)

    def near(self, line: str) -> bool:
        """Whether ``line`` is close to ordinary text: alike as a whole, or alike the way the matcher's text
        stage takes a paste for a near-copy (:func:`resembles`: partial, covering most of it), so that
        no ordinary line could ever be answered through it."""
        masked = mask(line)
        if process.extractOne(masked, self.lines, scorer=fuzz.ratio, score_cutoff=ORDINARY_SIMILARITY):
            return True
        alike = process.extract(masked, self.lines, scorer=fuzz.partial_ratio, score_cutoff=NEAR_SIMILARITY, limit=None)
        return any(min(len(found), len(masked)) / len(masked) >= NEAR_COVERAGE for found, _, _ in alike)

    def specific(self, line: str) -> list[str]:
        """What ``line`` names beyond the generic vocabulary: its other words, and its Xid codes (the code
        names the fault, as in :func:`bot.matching.knownlines.mask`)."""
        found = sorted(
            word
            for word in words(line)
            if word not in self.vocabulary and word not in self.common and not _ERROR_WORD.fullmatch(word)
        )
        return found + [f"xid {code}" for code in dict.fromkeys(XID_CODE.findall(line))]


def refusal(line: str, ordinary: Ordinary) -> str | None:
    """Why ``line`` cannot be an example (None when it can): too short, not an error, ordinary text, or
    generic (it names fewer than ``MIN_SPECIFIC`` things beyond the generic vocabulary: any failure
    prints such a line, so it is evidence for none)."""
    text = squash(line)
    if len(text) < MIN_CHARS:
        return f"shorter than {MIN_CHARS} characters"
    if not _ERRORISH.search(text):
        return "does not look like an error line"
    if ordinary.near(text):
        return "too close to ordinary chat or a healthy log line"
    if len(ordinary.specific(text)) < MIN_SPECIFIC:
        return "too generic: it names nothing specific to one failure"
    return None


def lines_to_keep(result: MatchResult, ordinary: Ordinary) -> list[str]:
    """What a confirmation of ``result`` stores: the best match's evidence lines, then the paste's other
    error-looking lines, redacted, screened and capped (``LINES_KEPT`` lines of ``LINE_CHARS``). Every
    host any of them names in a host position is redacted in all of them."""
    evidence = [ev.line for ev in result.best.evidence] if result.best is not None else []
    candidates = [raw.strip() for raw in [*evidence, *result.lines]]
    hosts = hosts_in(candidates) | (set(result.suspects.hosts) if result.suspects is not None else set())
    kept: list[str] = []
    for raw in candidates:
        line = redact(raw, hosts)[:LINE_CHARS]
        if line not in kept and refusal(line, ordinary) is None:
            kept.append(line)
        if len(kept) >= LINES_KEPT:
            break
    return kept


def resembles(line: str, example: str) -> bool:
    """Whether the matcher's text stage takes ``line`` as a near-copy of ``example``: masked forms alike
    (``NEAR_SIMILARITY``, partial), ``line`` covering most of it, and no other Xid code."""
    pasted, known = mask(squash(line)), mask(squash(example))
    if not known or min(len(pasted), len(known)) / len(known) < NEAR_COVERAGE:
        return False
    codes, their = set(XID_CODE.findall(line)), set(XID_CODE.findall(example))
    if codes and their and not codes & their:
        return False
    return fuzz.partial_ratio(known, pasted) >= NEAR_SIMILARITY


@dataclass(frozen=True, slots=True)
class Confirmed:
    """One stored line of a case with who confirmed it (from storage)."""

    case_id: str
    line: str
    user_id: str


def example_lines(confirmed: Sequence[Confirmed], ordinary: Ordinary, reviewers: Iterable[str] = ()) -> list[KnownLine]:
    """The matcher's known lines for the confirmed examples, one per case and masked form (the same line
    with other numbers is the same line): decisive when two different people, or one reviewer, confirmed
    it for the case; a hint otherwise, and always a hint when it was confirmed for several cases (then it
    tells none of them apart). Lines that fail :func:`refusal` (the rules may have tightened since they
    were stored) are left out."""
    staff = set(reviewers)
    first: dict[tuple[str, str], str] = {}
    users: dict[tuple[str, str], set[str]] = defaultdict(set)
    cases: dict[str, set[str]] = defaultdict(set)
    for example in confirmed:
        text = squash(example.line)
        key = (example.case_id, mask(text))
        first.setdefault(key, text)
        users[key].add(example.user_id)
        cases[key[1]].add(example.case_id)
    lines = []
    for key, text in first.items():
        if refusal(text, ordinary) is not None:
            continue
        who = users[key]
        sure = (len(who) >= 2 or bool(who & staff)) and len(cases[key[1]]) == 1
        strength = Strength.DECISIVE if sure else Strength.SUPPORTING
        lines.append(KnownLine(key[0], text, strength, None, confirmed=True))
    return lines
