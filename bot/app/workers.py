"""Where blocking work runs, so that acknowledgements never wait behind matching.

Storage calls (event dedupe, preferences, the reply log) run on a small I/O pool of their own; reads that
may take longer and answer no acknowledgement (App Home) on a ``side`` pool, so that they never hold the
dedupe claims up; matching runs on a pool of ``match_workers`` threads with at most ``match_queue`` more
waiting. Past that,
:meth:`WorkerPools.match` raises :class:`Busy` at once: an explicit request is told to try again, an
unprompted paste is dropped and counted. Call both from the event loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")


class Busy(Exception):
    """Every matching worker is busy and the queue is full."""


class WorkerPools:
    def __init__(
        self, match_workers: int = 2, match_queue: int = 6, io_workers: int = 4, side_workers: int = 2
    ) -> None:
        self.match_workers = match_workers
        self.limit = match_workers + match_queue
        self._match = ThreadPoolExecutor(max_workers=match_workers, thread_name_prefix="match")
        self._io = ThreadPoolExecutor(max_workers=io_workers, thread_name_prefix="io")
        self._side = ThreadPoolExecutor(max_workers=side_workers, thread_name_prefix="side")
        self.in_flight = 0  # matches running or queued; only the event loop thread touches it

    @staticmethod
    async def _run(pool: ThreadPoolExecutor, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()  # log ids travel with the work, as with asyncio.to_thread
        return await loop.run_in_executor(pool, functools.partial(context.run, fn, *args, **kwargs))

    async def io(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Run a short blocking call (storage) off the event loop, never behind a match."""
        return await self._run(self._io, fn, *args, **kwargs)

    async def side(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Run a read that may be slow and answers no acknowledgement (App Home), never on the I/O pool."""
        return await self._run(self._side, fn, *args, **kwargs)

    async def match(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Run CPU-bound matching work. Raises :class:`Busy` when ``limit`` matches are already in flight."""
        if self.in_flight >= self.limit:
            raise Busy
        self.in_flight += 1
        try:
            return await self._run(self._match, fn, *args, **kwargs)
        finally:
            self.in_flight -= 1

    def shutdown(self) -> None:
        self._match.shutdown(wait=False, cancel_futures=True)
        self._io.shutdown(wait=False, cancel_futures=True)
        self._side.shutdown(wait=False, cancel_futures=True)
