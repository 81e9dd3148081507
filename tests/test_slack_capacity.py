"""Acknowledgements and dedupe never wait behind matching: with every matching thread and queue slot
taken, a plain message is still acknowledged and claimed at once, an explicit paste is told to try
again, and an unprompted paste is dropped and counted."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from conftest import BACKENDS, NOW
from slack_harness import HarnessSlack, SlackHarness, harness_settings, message_event

from bot.app.service import IncidentService
from bot.app.workers import WorkerPools
from bot.library.case_store import CaseLibrary
from bot.ops.clock import fixed
from bot.replies.labels import label
from bot.storage import Storage

ECC = "[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered"


@pytest.mark.timing
async def test_a_full_matching_pool_never_delays_an_ack(
    fake: HarnessSlack, storage: Storage, library: CaseLibrary
) -> None:
    pools = WorkerPools(match_workers=1, match_queue=1)
    service = IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0)
    async with SlackHarness(fake, service, harness_settings(fake), pools=pools) as h:
        gate = threading.Event()
        blockers = [asyncio.create_task(pools.match(gate.wait, 60)) for _ in range(pools.limit)]
        try:
            while pools.in_flight < pools.limit:  # noqa: ASYNC110 - the tasks above start on the next turns
                await asyncio.sleep(0)
            event = message_event("morning all, is the queue empty?")
            started = time.monotonic()
            response = await h.event(event)
            assert response.status_code == 200 and time.monotonic() - started < 1.0  # Slack retries after 3 s
            assert not storage.claim_event(f"message:C1:{event['ts']}", service.now(), 60)  # claimed already

            _, hook = await h.command(ECC)
            await h.wait_for(lambda: h.hook_calls(hook))
            assert h.hook_calls(hook)[0].body["text"].startswith(label("busy", "en"))

            await h.event(message_event(ECC))
            await h.settle()
            assert h.posts() == []
            metrics = service.metrics.render().decode()
            # The plain message and the unprompted paste were both dropped (every message is matched).
            assert 'incident_bot_busy_total{kind="unprompted"} 2.0' in metrics
            assert 'incident_bot_busy_total{kind="explicit"} 1.0' in metrics
        finally:
            gate.set()
            await asyncio.gather(*blockers)
    # Once the pool drains, the same paste is answered.
    pools = WorkerPools(match_workers=1, match_queue=1)
    async with SlackHarness(fake, service, harness_settings(fake), pools=pools) as h:
        await h.event(message_event(ECC, channel="C9"))
        await h.settle()
        assert [c.body["channel"] for c in h.posts()] == ["C9"]


_ = (BACKENDS, pytest)  # the storage fixture runs this on SQLite and PostgreSQL
