"""The two ways a command refuses, each one line on stderr: :class:`NotFound` (exit status 1: the thing
asked for is not there) and :class:`UsageProblem` (exit status 2: the command line or a setting is wrong)."""

from __future__ import annotations


class NotFound(Exception):
    """A case, draft or example the command names does not exist (exit status 1)."""


class UsageProblem(Exception):
    """An argument or setting the command cannot use (exit status 2)."""


def no_case(raw: str, closest: list[str]) -> NotFound:
    """ "no case 'IL-9999' in the library", with the close ids when there are any."""
    near = f"; close ids: {', '.join(closest)}" if closest else ""
    return NotFound(f"no case {raw[:40]!r} in the library{near} (`incident-bot cases list` lists them)")
