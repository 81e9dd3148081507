"""Errors of the job's own program, not of the cluster. Pure.

A watchdog timeout is printed by every rank whatever stalled the collective; when another line of the
paste is the program's own fault (an illegal memory access, a device-side assert, CUDA running out of the
GPU's memory, an MMU fault Xid 13/31, a Python exception), that line is the cause and no "faulty GPU" case
may answer unprompted: on-call would drain healthy nodes for a software bug. The same lines, with no case
to explain them, get one plain sentence: this looks like an error in the job."""

from __future__ import annotations

import re
from collections.abc import Iterable

JOB_ERROR = re.compile(
    r"an illegal memory access was encountered|device-side assert(?:ion)? triggered"
    r"|CUDA out of memory|OutOfMemoryError: CUDA|CUDA_ERROR_OUT_OF_MEMORY|RESOURCE_EXHAUSTED: Out of memory"
    r"|Xid \(PCI:[0-9a-fA-F:.]{4,16}\): (?:13|31),"
    r"|^(?:\[rank\d{1,6}\]: ?)?(?:KeyError|NameError|AttributeError|TypeError|IndexError|ZeroDivisionError"
    r"|ModuleNotFoundError|ImportError|FileNotFoundError|AssertionError|UnboundLocalError)\b"
)
_LINE_CHARS = 2000


def job_error(lines: Iterable[str]) -> str | None:
    """The first of ``lines`` that is the program's own error, cut to one screen line, else None."""
    found = job_error_at(enumerate(lines))
    return found[1] if found else None


def job_error_at(numbered: Iterable[tuple[int, str]]) -> tuple[int, str] | None:
    """(line number, text cut to one screen line) of the first numbered line that is the program's own
    error, else None."""
    for number, line in numbered:
        text = line[:_LINE_CHARS]
        if JOB_ERROR.search(text):
            return number, text if len(text) <= 300 else text[:299] + "…"
    return None
