"""Reading logs of any size for matching: the head and the tail are kept, the middle is counted (its
bytes and lines) but never held in memory. A regular file is read by seeking; a pipe is streamed."""

from __future__ import annotations

import os
from typing import BinaryIO

from bot.model.excerpt import HEAD_SHARE, Excerpt, ExcerptBuilder

CHUNK = 8 << 20


def read_stream(stream: BinaryIO, max_bytes: int) -> Excerpt:
    """Everything ``stream`` yields, as an excerpt of at most ``max_bytes`` (bounded memory)."""
    builder = ExcerptBuilder(max_bytes)
    while chunk := stream.read(CHUNK):
        builder.feed(chunk)
    return builder.finish()


def read_file(path: str, max_bytes: int) -> Excerpt:
    """A file as an excerpt of at most ``max_bytes``: a regular file's head and tail are read directly and
    only the middle's newlines are counted; anything else (a FIFO, /dev/stdin) is streamed.
    Raises ``OSError`` when it cannot be read."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if not os.path.isfile(path) or size <= max_bytes:
            return read_stream(handle, max_bytes)
        head_size = int(max_bytes * HEAD_SHARE)
        tail_size = max_bytes - head_size
        head = handle.read(head_size)
        lines = 0
        remaining = size - head_size - tail_size
        while remaining > 0:
            chunk = handle.read(min(CHUNK, remaining))
            if not chunk:
                break
            lines += chunk.count(b"\n")
            remaining -= len(chunk)
        tail = handle.read()
        return Excerpt(head, tail, size - len(head) - len(tail), lines)
