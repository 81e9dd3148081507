"""Redaction: credentials, e-mail and IP addresses and host names replaced by placeholders before a pasted
line is stored (a confirmed example, a draft) or put in a button value. Pure.

Credentials are found first by gitleaks' maintained rule set (``bot.matching.secrets``), then by
:data:`REDACTIONS`, the rules for what it lacks (``mysql -p…``, SAS ``sig=``, a key and value with only a
space between, loose vendor shapes, addresses and hosts), applied in order. ``tests/test_redaction_rules.py``
holds for each rule a line it must change and one it must leave alone, and the identifiers suspects and signatures need
(PCI bus ids, GPU UUIDs, addresses, hashes, Xid codes) that no rule may touch.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bot.matching.secrets import redact_secrets
from bot.matching.suspects import extract_suspects, is_host

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


@dataclass(frozen=True, slots=True)
class Redaction:
    """One rule of :data:`REDACTIONS`: what ``pattern`` matches is replaced by ``replacement``."""

    name: str
    pattern: re.Pattern[str]
    replacement: str | Callable[[re.Match[str]], str]


def _ipv6(found: re.Match[str]) -> str:
    """An IPv6 address becomes ``<ip>``; a PCI bus id, a MAC or a time stays (they do not parse as one)."""
    text = found.group(0)
    if "::" not in text and text.count(":") != 7:
        return text
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return text
    return "<ip>"


# What is redacted before a line is stored or put in a button value, in this order (``tests/
# test_redaction_rules.py`` holds a line each rule must change and one it must leave alone).
REDACTIONS: tuple[Redaction, ...] = (
    # Credentials in URLs: scheme://user:password@host
    Redaction(
        "url-credentials",
        # up to the last @ of the authority: https://user@evil.com:secret@host hides the whole userinfo
        re.compile(r"\b([a-z][a-z0-9+.-]{1,20}://)(?=[^\s/]{0,400}:[^\s/]{0,400}@)[^\s/]{1,400}@"),
        r"\1<user>:<redacted>@",
    ),
    # Slack webhook and workflow URLs (the path is the secret), presigned S3 and GCS URLs' signatures
    Redaction(
        "slack-webhook",
        re.compile(r"(hooks\.slack\.com/)(?:services|workflows|triggers)/[^\s\"'<>]{1,300}"),
        r"\1<redacted>",
    ),
    Redaction(
        "presigned-url",
        re.compile(r"\b(X-(?:Amz|Goog)-(?:Signature|Credential|Security-Token)=)[^&\s\"']{1,3000}", re.IGNORECASE),
        r"\1<redacted>",
    ),
    # An Authorization header, whatever its scheme (Basic, Bearer, Digest, a bare key)
    Redaction(
        "authorization-header",
        re.compile(
            r"\b((?:proxy-)?authorization[\"']?\s{0,3}[=:]\s{0,3}[\"']?)"
            r"(?:(?:basic|bearer|digest|token|negotiate|ntlm|apikey|aws4-hmac-sha256)\s{1,3})?[^\s\"',;]{1,500}",
            re.IGNORECASE,
        ),
        r"\1<redacted>",
    ),
    Redaction("bearer", re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE), r"\1 <redacted>"),
    # key=value, key: value, "key": "value" for secret-looking keys, also with a prefix (DB_PASSWORD,
    # WANDB_API_KEY, aws_secret_access_key)
    Redaction(
        "secret-key-value",
        re.compile(
            rf"\b({_SENSITIVE_KEY}[\"']?\s{{0,3}}[=:]\s{{0,3}})"
            r"(?:\"[^\"\n]{0,300}\"|'[^'\n]{0,300}'|[^\s\"',;]{1,300})",
            re.IGNORECASE,
        ),
        r"\1<redacted>",
    ),
    # key and value with only spaces between: MY_PASSWD hunter2, aws_session_token ASIA…; the key is an
    # identifier (an underscore in it, or a password word) and the value mixes letters and digits, so prose
    # ("the token expired") is left alone.
    Redaction(
        "secret-key-space-value",
        re.compile(
            r"(?<![\w-])((?:[a-z0-9]{1,40}_)+(?:pass(?:word|wd|phrase)?|pwd|secret|token|key)(?:_[a-z0-9]{1,20})?"
            r"|passw(?:or)?d|passphrase)(\s{1,3})(?![-<=:])(?=[^\s]{0,300}\d)(?=[^\s]{0,300}[a-z])[^\s\"',;]{6,300}",
            re.IGNORECASE,
        ),
        r"\1\2<redacted>",
    ),
    # mysql -pSECRET (the password joined to -p), for the MySQL and MariaDB clients
    Redaction(
        "mysql-password",
        re.compile(r"(\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]{0,300}?\s-p)(?=[^\s-])\S{1,300}"),
        r"\1<redacted>",
    ),
    # Azure SAS signatures and other signed query strings: ?sig=…, &signature=…, ?key=…, &access_token=…
    Redaction(
        "query-secret",
        re.compile(
            r"([?&](?:sig|signature|key|api[_-]?key|access[_-]?token|token|password|secret)=)[^&\s\"'#]{1,3000}",
            re.IGNORECASE,
        ),
        r"\1<redacted>",
    ),
    # A private key's armour: everything after the BEGIN line on the same line (the key itself)
    Redaction(
        "private-key",
        re.compile(r"-----BEGIN[A-Z0-9 _-]{0,60}PRIVATE KEY(?: BLOCK)?-----[^\n]{0,5000}"),
        "<redacted>",
    ),
    # command-line flags: --password hunter2, --hf-token hf_…
    Redaction(
        "secret-flag",
        re.compile(rf"((?<!\S)--?{_SENSITIVE_KEY}\s{{1,3}})(?![-<])\S{{1,300}}", re.IGNORECASE),
        r"\1<redacted>",
    ),
    # Known token shapes
    Redaction("slack-token", re.compile(r"\b(?:xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,})"), "<redacted>"),
    Redaction("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})"), "<redacted>"),
    Redaction("slack-refresh-token", re.compile(r"\bxoxe(?:\.xox[bp])?-\d-[A-Za-z0-9-]{20,}"), "<redacted>"),
    Redaction(
        "vendor-token",
        # npm, Docker Hub, NVIDIA NGC/API catalog, Google OAuth access tokens, Telegram bots: loose
        # shapes next to gitleaks' exact ones (a token cut by a log line is still a secret)
        re.compile(
            r"\b(?:npm_[A-Za-z0-9]{30,}|dckr_pat_[A-Za-z0-9_-]{20,}|nvapi-[A-Za-z0-9_-]{20,}"
            r"|ya29\.[A-Za-z0-9_-]{20,}|\d{8,10}:AA[A-Za-z0-9_-]{30,})"
        ),
        "<redacted>",
    ),
    Redaction("aws-access-key", re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "<redacted>"),
    Redaction("openai-key", re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"), "<redacted>"),
    Redaction("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{20,}"), "<redacted>"),
    Redaction("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), "<redacted>"),
    Redaction("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"), "<redacted>"),
    Redaction("email", re.compile(r"\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,200}\.[A-Za-z]{2,20}\b"), "<email>"),
    Redaction("ipv4", re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"), "<ip>"),
    Redaction("ipv6", re.compile(r"(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:.])"), _ipv6),
)


_MAX_HOSTS = 64  # host names replaced in one line (a line naming more is cut at MAX_LINE_CHARS anyway)


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
    text = redact_secrets(line)  # gitleaks' rule set first (bot.matching.secrets), then ours
    for rule in REDACTIONS:
        text = rule.pattern.sub(rule.replacement, text)
    text = _FQDN.sub(_fqdn, text)
    if names:
        either = "|".join(re.escape(host) for host in sorted(names, key=len, reverse=True)[:_MAX_HOSTS])
        text = re.sub(rf"(?<![A-Za-z0-9-])(?:{either})(?![A-Za-z0-9-])", "<host>", text, flags=re.IGNORECASE)
    return text
