"""Naming where a failure happened: hosts, ranks, GPU PCI bus ids and indices, Slurm job ids. Pure.

Identifiers come only from the lines that matched (and their prefixes), or from lines that tie a rank
already seen on a matched line to a host: srun's ``srun: error: HOST: task N`` and torchrun's failure
table. Nothing is taken from unrelated lines. A line printed by every healthy rank (a collective timeout)
only says who *reported* the failure; a decisive error line says where it *failed*.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.model.results import SuspectInfo

# A host name: letters, digits, dots and hyphens, with at least one digit (gpu-a17, n30041, h100-018,
# ip-10-1-92-13, node-12.cluster). Words like "RuntimeError" or "kernel" never qualify.
_HOST = r"(?=[A-Za-z0-9.-]{0,62}\d)[A-Za-z][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,62}){0,4}"
_HOST_RE = re.compile(rf"^{_HOST}$")
_NOT_HOSTS = re.compile(r"^(?:cuda|sm|fp|bf|int|uint|float|e|x|v|py|gpu|rank|default|local|python)\d{0,4}$", re.I)

# Names that read like a host prefix (``name: …``) but are a device or a Python name: ``nvme0n1:``,
# ``ib0:``, ``mlx5_0:``, ``psycopg2.OperationalError:``.
_DEVICE_OR_CODE = re.compile(
    r"^(?:nvme\d+(?:n\d+)?(?:p\d+)?|sd[a-z]{1,2}\d*|hd[a-z]\d*|ib\d+|eth\d+|en[ops]\w+|mlx\d_\d+|bond\d+"
    r"|md\d+|dm-\d+|loop\d+|[\w.]*\.[A-Z]\w*)$"
)

# Classic syslog (``Mar  3 10:00:01 host prog[pid]:``) and RFC 3339 (rsyslog's high-precision template,
# ``journalctl -o short-iso``: ``2024-03-03T10:00:01.123456+00:00 host prog[pid]:``).
_SYSLOG_HOST = re.compile(
    r"^(?:[A-Z][a-z]{2} {1,2}\d{1,2} \d{2}:\d{2}:\d{2}"
    r"|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?)"
    rf" ({_HOST}) [\w./-]{{1,64}}(?:\[\d{{1,8}}\])?:"
)
_BRACKET_HOST = re.compile(rf"^\[({_HOST})\]:?\s")
_PDSH_HOST = re.compile(rf"^({_HOST}): ")
_NCCL_HOST = re.compile(rf"^({_HOST}):\d{{1,9}}:\d{{1,9}} \[(\d{{1,2}})\]")
_SRUN_TASK = re.compile(rf"srun: error: ({_HOST}): tasks? (\d{{1,6}})(?:-(\d{{1,6}}))?:")
_SRUN_NODE = re.compile(rf"Node failure on ({_HOST})\b")
_RANK = re.compile(
    r"\[(?:rank|Rank|RANK) ?(\d{1,6})\]|\bRank (\d{1,6})\b|^(\d{1,6}): |\bglobal_rank[:= ]{1,3}(\d{1,6})"
)
_LOCAL_RANK = re.compile(r"^\[default(\d{1,3})\]|\blocal_rank[:= (]{1,3}(\d{1,3})")
_PCI = re.compile(
    r"PCI:([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})"
    r"|\bGPU ?(?:0000)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.\d)?"
)
_GPU_INDEX = re.compile(r"\bcuda:(\d{1,2})\b|\bcudaDev (\d{1,2})\b|\bGPU (\d{1,2})\b(?![:.]\w)")
_JOB = re.compile(
    r"\b(?:JOB|STEP) (\d{2,12})\b|\bStepId=(\d{2,12})|\bjob[_ ]?id[:= ]{1,3}(\d{2,12})|\bslurm-(\d{2,12})\.out"
)
_TORCHRUN_BLOCK = re.compile(
    rf"host\s{{0,12}}:\s{{0,4}}({_HOST})\s{{0,8}}\n[^\n]{{0,200}}?rank\s{{0,12}}:\s{{0,4}}(\d{{1,6}})"
)
_MAX_EVIDENCE_LINES = 2000
# Lines that name where a failure happened even when no signature matched them: a task srun saw killed or
# crash on a host (not one that exited with a code, was terminated or aborted, as every rank is after a
# watchdog abort; and not when srun says the same of every host it names),
# slurmstepd's job line (its
# job; its host only for a reason of the host's own), an
# NVIDIA driver line under a syslog host, an NCCL ``WARN Cuda failure`` under its host prefix. A host
# that is merely mentioned on any other line is never taken.
_TASK_DIED = re.compile(
    rf"srun: error: ({_HOST}): tasks? \d{{1,6}}(?:-\d{{1,6}})?: "
    r"(?:Killed|Segmentation fault|Bus error|Illegal instruction|Floating point exception|Out Of Memory)"
)
_STEPD_JOB = re.compile(
    rf"slurmstepd: error: \*{{3}} (?:JOB|STEP) (\d{{2,12}})(?:\.\w{{1,12}})? ON ({_HOST}) (.{{0,200}})"
)
# slurmstepd's host is the batch host: it is where the job failed only for a reason of its own.
_NOT_THE_HOSTS_FAULT = ("NODE FAILURE", "TIME LIMIT", "PREEMPTION")
_NAMING = ("srun: error:", "slurmstepd: error:", "NVRM: Xid", "NCCL WARN Cuda failure")
_MAX_NAMING_LINES = 2000


@dataclass(frozen=True, slots=True)
class Suspects:
    """Where the failure happened (``failed``) or who reported it (``reported``), with counts."""

    failed: bool
    collective: bool = False  # a report every rank prints (collective timeout): the culprit may be silent
    hosts: tuple[tuple[str, int], ...] = ()
    ranks: tuple[int, ...] = ()
    local_ranks: tuple[int, ...] = ()
    pci: tuple[str, ...] = ()
    gpus: tuple[int, ...] = ()
    jobs: tuple[str, ...] = ()
    lines: int = 0

    @property
    def empty(self) -> bool:
        return not (self.hosts or self.ranks or self.local_ranks or self.pci or self.gpus or self.jobs)

    def fills(self) -> dict[str, str]:
        """Values for remediation templates. Only unambiguous values, except hosts: several failing
        hosts fill ``{node}`` as a comma list, which is what ``sbatch --exclude`` takes."""
        out: dict[str, str] = {}
        if self.hosts and self.failed:
            out["node"] = ",".join(host for host, _ in self.hosts[:8])
        if len(self.pci) == 1:
            out["pci"] = self.pci[0] if "." in self.pci[0] else f"{self.pci[0]}.0"  # nvidia-smi -i wants D:B:D.F
        if len(self.gpus) == 1:
            out["gpu"] = str(self.gpus[0])
        if len(self.ranks) == 1:
            out["rank"] = str(self.ranks[0])
        if len(self.jobs) == 1:
            out["job"] = self.jobs[0]
        return out

    def to_info(self) -> SuspectInfo | None:
        if self.empty:
            return None
        return SuspectInfo(
            failed=self.failed,
            summary=self.describe(),
            hosts=dict(self.hosts),
            ranks=list(self.ranks),
            local_ranks=list(self.local_ranks),
            pci=list(self.pci),
            gpus=list(self.gpus),
            jobs=list(self.jobs),
            fills=self.fills(),
            collective=self.collective,
        )

    def describe(self) -> str:
        """One short line: ``failed on gpu-a17 (rank 5) · GPU PCI 0000:3b:00 · job 682842``."""
        if self.empty:
            return ""
        parts: list[str] = []
        verb = "failed on" if self.failed else "reported by"
        if self.hosts:
            shown = ", ".join(f"{h} ×{n}" if n > 1 else h for h, n in self.hosts[:5])
            more = f" and {len(self.hosts) - 5} more" if len(self.hosts) > 5 else ""
            parts.append(f"{verb} {shown}{more}")
        if self.ranks:
            label = "rank" if len(self.ranks) == 1 else "ranks"
            parts.append(f"{label} {_spans(self.ranks)}" if self.hosts else f"{verb} {label} {_spans(self.ranks)}")
        elif self.local_ranks:
            parts.append(f"local rank {_spans(self.local_ranks)}")
        if self.pci:
            parts.append("GPU PCI " + ", ".join(self.pci[:4]))
        if self.gpus and not self.pci:
            parts.append("GPU " + ", ".join(map(str, self.gpus[:4])))
        if self.jobs:
            parts.append("job " + ", ".join(self.jobs[:3]))
        if self.collective and not self.failed:
            parts.append("every rank reports a stalled collective; the failing one may have printed nothing")
        return " · ".join(parts)


def _spans(numbers: Sequence[int]) -> str:
    """[1,2,3,7] -> '1-3, 7' (at most 6 spans)."""
    spans: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        spans.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(spans[:6]) + (" …" if len(spans) > 6 else "")


def is_host(token: str) -> bool:
    return bool(_HOST_RE.match(token)) and not _NOT_HOSTS.match(token) and not _DEVICE_OR_CODE.match(token)


def _first(groups: Iterable[str | None]) -> str | None:
    return next((g for g in groups if g), None)


def _host_of(line: str) -> str | None:
    for pattern in (_SYSLOG_HOST, _NCCL_HOST, _BRACKET_HOST, _PDSH_HOST):
        found = pattern.match(line)
        if found and is_host(found.group(1)):
            return found.group(1)
    return None


def _rank_hosts(text: str) -> dict[int, str]:
    """Ranks tied to hosts by srun's task lines and torchrun's failure table, anywhere in the paste."""
    ties: dict[int, str] = {}
    for found in _SRUN_TASK.finditer(text):
        host, first, last = found.group(1), int(found.group(2)), found.group(3)
        if is_host(host):
            for rank in range(first, (int(last) if last else first) + 1):
                ties.setdefault(rank, host)
    for found in _TORCHRUN_BLOCK.finditer(text):
        if is_host(found.group(1)):
            ties.setdefault(int(found.group(2)), found.group(1))
    return ties


def _naming_lines(text: str) -> list[str]:
    """The lines of ``text`` holding a ``_NAMING`` marker, in order, each cut to 2,000 characters; at most
    ``_MAX_NAMING_LINES``. Found with ``str.find`` (no per-line Python loop over a 2 MiB paste)."""
    starts: set[int] = set()
    for marker in _NAMING:
        at = text.find(marker)
        while at != -1 and len(starts) < _MAX_NAMING_LINES:
            start = text.rfind("\n", 0, at) + 1
            starts.add(start)
            end = text.find("\n", at)
            at = text.find(marker, end) if end != -1 else -1
    lines = []
    for start in sorted(starts)[:_MAX_NAMING_LINES]:
        end = text.find("\n", start)
        lines.append(text[start : end if end != -1 else len(text)][:2000])
    return lines


@dataclass(frozen=True, slots=True)
class Named:
    """What the lines that name a failure's place say, anywhere in the paste."""

    hosts: tuple[str, ...] = ()
    jobs: tuple[str, ...] = ()
    pci: tuple[str, ...] = ()


def named_failures(raw_lines: Sequence[str]) -> Named:
    """Hosts, jobs and GPU bus ids from the lines that name where a failure happened (``_NAMING``), in the
    order seen; at most ``_MAX_NAMING_LINES`` such lines are read."""
    return _named_in("\n".join(raw_lines))


def _named_in(text: str) -> Named:
    """:func:`named_failures` of the paste's lines already joined (``text``)."""
    hosts: dict[str, None] = {}
    jobs: dict[str, None] = {}
    pci: dict[str, None] = {}
    srun_hosts: dict[str, None] = {}
    died: dict[str, None] = {}
    for line in _naming_lines(text):
        for found in _SRUN_TASK.finditer(line):
            srun_hosts.setdefault(found.group(1), None)
        for found in _TASK_DIED.finditer(line):
            if is_host(found.group(1)):
                died.setdefault(found.group(1), None)
        for found in _STEPD_JOB.finditer(line):
            jobs.setdefault(found.group(1), None)
            reason = found.group(3)
            own = "DUE TO" in reason and not any(other in reason for other in _NOT_THE_HOSTS_FAULT)
            if own and is_host(found.group(2)):
                hosts.setdefault(found.group(2), None)
        if "NVRM: Xid" in line or "NCCL WARN Cuda failure" in line:
            host = _host_of(line)
            if host:
                hosts.setdefault(host, None)
            for found in _PCI.finditer(line):
                value = _first(found.groups())
                if value:
                    pci.setdefault(value.lower(), None)
    if died and (len(srun_hosts) <= 1 or len(died) < len(srun_hosts)):
        hosts = {**died, **hosts}
    return Named(tuple(hosts), tuple(jobs), tuple(pci))


def extract_suspects(
    raw_lines: Sequence[str], line_numbers: Iterable[int], *, failed: bool, collective: bool = False
) -> Suspects:
    """Suspects from the 0-based ``line_numbers`` of ``raw_lines`` that matched.

    ``failed``: the lines are the error itself (decisive), not a hint or a report every rank prints.
    ``collective``: the lines are a collective timeout that healthy ranks print too.
    """
    numbers = sorted(set(line_numbers))[:_MAX_EVIDENCE_LINES]
    hosts: Counter[str] = Counter()
    ranks: set[int] = set()
    local_ranks: set[int] = set()
    pci: list[str] = []
    gpus: set[int] = set()
    jobs: list[str] = []
    for number in numbers:
        if not 0 <= number < len(raw_lines):
            continue
        line = raw_lines[number][:2000]
        host = _host_of(line)
        for found in _SRUN_TASK.finditer(line):
            host = host or (found.group(1) if is_host(found.group(1)) else None)
        for found in _SRUN_NODE.finditer(line):
            host = host or (found.group(1) if is_host(found.group(1)) else None)
        if host:
            hosts[host] += 1
        for found in _RANK.finditer(line):
            value = _first(found.groups())
            if value is not None:
                ranks.add(int(value))
        for found in _LOCAL_RANK.finditer(line):
            value = _first(found.groups())
            if value is not None:
                local_ranks.add(int(value))
        for found in _PCI.finditer(line):
            value = _first(found.groups())
            if value and value.lower() not in pci:
                pci.append(value.lower())
        for found in _GPU_INDEX.finditer(line):
            value = _first(found.groups())
            if value is not None:
                gpus.add(int(value))
        for found in _JOB.finditer(line):
            value = _first(found.groups())
            if value and value not in jobs:
                jobs.append(value)
    text = "\n".join(raw_lines)  # once: a 2 MiB paste is read whole by both of these
    if ranks and not hosts:
        ties = _rank_hosts(text)
        for rank in sorted(ranks):
            if rank in ties:
                hosts[ties[rank]] += 1
    if collective and not ranks and not local_ranks:
        # Fallout lines that name no rank are not a report every rank prints: they are the node's own
        # (a driver's Xid 154 naming the recovery action after another Xid), so they say where it failed.
        failed, collective = True, False
    named = _named_in(text)
    if named.hosts and (failed or not hosts or collective):
        # A line that names where it failed outranks the hosts that only reported it; beside failing hosts
        # it adds the others that failed too (every one is listed, none picked).
        if not failed:
            hosts = Counter()
        failed, collective = True, False
        for host in named.hosts:
            hosts[host] += 1 if host not in hosts else 0
    jobs += [job for job in named.jobs if job not in jobs]
    pci += [value for value in named.pci if value not in pci] if not pci else []
    return Suspects(
        failed=failed,
        collective=collective,
        hosts=tuple(sorted(hosts.items(), key=lambda item: (-item[1], item[0]))),
        ranks=tuple(sorted(ranks)),
        local_ranks=tuple(sorted(local_ranks)),
        pci=tuple(pci),
        gpus=tuple(sorted(gpus)),
        jobs=tuple(jobs),
        lines=len(numbers),
    )
