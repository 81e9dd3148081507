"""What is matched of a text too large to keep whole: its head and tail, and what lay between. Pure.

Readers of files, pipes and downloads build an ``Excerpt`` in bounded memory; the matcher numbers lines
through the cut with it.
"""

from __future__ import annotations

from dataclasses import dataclass

HEAD_SHARE = 0.25  # of the byte cap kept from the start; the rest comes from the end, where errors are


@dataclass(frozen=True, slots=True)
class Excerpt:
    """What is matched of a text too large to keep whole: its first and last bytes, and what lies between.

    ``skipped_lines`` counts the newlines in the skipped middle; None when only the two ends were fetched
    (a ranged download), so lines after the cut can only be numbered from the end of the file.
    """

    head: bytes
    tail: bytes = b""
    skipped_bytes: int = 0
    skipped_lines: int | None = 0
    unread_bytes: int = 0  # bytes after the end of what was read (a download stopped at its cap)

    @property
    def size(self) -> int:
        return len(self.head) + len(self.tail)


def excerpt(data: bytes, max_bytes: int) -> Excerpt:
    """``data`` whole when it fits ``max_bytes``; else its first quarter and last three quarters of the cap
    (errors are usually at the end), with the bytes and lines of the middle counted."""
    if len(data) <= max_bytes:
        return Excerpt(data)
    head = int(max_bytes * HEAD_SHARE)
    tail = max_bytes - head
    end = len(data) - tail
    return Excerpt(data[:head], data[end:], end - head, data.count(b"\n", head, end))


class ExcerptBuilder:
    """Builds an :class:`Excerpt` from a stream of chunks (a file, stdin, a download) in bounded memory:
    the first quarter of ``max_bytes`` as it arrives, the last three quarters in a buffer that drops its
    oldest bytes, counting the bytes and newlines dropped."""

    def __init__(self, max_bytes: int) -> None:
        self.head_cap = int(max_bytes * HEAD_SHARE)
        self.tail_cap = max_bytes - self.head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.skipped_bytes = 0
        self.skipped_lines = 0
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        self._tail += chunk
        if len(self._tail) > 2 * self.tail_cap:  # trim in batches: amortised linear
            self._drop(len(self._tail) - self.tail_cap)

    def _drop(self, count: int) -> None:
        dropped = self._tail[:count]
        self.skipped_bytes += len(dropped)
        self.skipped_lines += dropped.count(b"\n")
        del self._tail[:count]

    def finish(self, unread_bytes: int = 0) -> Excerpt:
        """The excerpt of everything fed; ``unread_bytes``: how much of the source was never read."""
        if len(self._tail) > self.tail_cap:
            self._drop(len(self._tail) - self.tail_cap)
        if not self.skipped_bytes:  # everything fitted: one piece
            return Excerpt(bytes(self._head + self._tail), unread_bytes=unread_bytes)
        return Excerpt(bytes(self._head), bytes(self._tail), self.skipped_bytes, self.skipped_lines, unread_bytes)
