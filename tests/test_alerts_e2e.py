"""Alerts in, end to end with real processes (``deploy/prometheus/dev-alerts.sh``, started by ``.ci/run`` and
``make dev-alerts``): a DCGM-exporter stand-in the test sets, Prometheus evaluating the rules in
``deploy/prometheus/rules.yml`` every second, and Alertmanager sending its webhook to the bot's own
listener. The test sets an Xid 79 on a node, waits for the post naming the case and the node, clears it and
waits for "resolved", then silences the alert from Slack and finds the silence in Alertmanager."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from slack_harness import HarnessSlack, SlackHarness, harness_settings
from test_slack_interactive import buttons, click

from bot.app.service import IncidentService
from bot.library.case_store import CaseLibrary
from bot.storage.memory import MemoryStorage

AM = os.environ.get("TEST_ALERTMANAGER_URL", "")
EXPORTER = os.environ.get("TEST_DCGM_EXPORTER_URL", "")
TOKEN_FILE = os.environ.get("TEST_ALERTMANAGER_TOKEN_FILE", "")
SCRIPT = Path(__file__).resolve().parent.parent / "deploy" / "prometheus" / "dev-alerts.sh"
CHANNEL = "CALERTS"
pytestmark = [pytest.mark.alerts]


@pytest.fixture
def token() -> str:
    return Path(TOKEN_FILE).read_text(encoding="utf-8").strip()


def _point_alertmanager_at(url: str) -> subprocess.CompletedProcess[str]:
    """Alertmanager's webhook to ``url`` (the script rewrites its config and reloads it)."""
    env = {**os.environ, "BOT_ALERT_URL": url, "PYTHON": sys.executable}
    return subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
async def bot(fake: HarnessSlack, library: CaseLibrary, token: str) -> AsyncIterator[SlackHarness]:
    # Alertmanager keeps real time: a silence must start now by its clock, so this bot's clock is the real
    # one (no expectation below is built from it).
    service = IncidentService(library, MemoryStorage(), deadline_s=20.0, now=lambda: datetime.now(UTC))
    settings = harness_settings(
        fake, ALERT_CHANNEL=CHANNEL, ALERTMANAGER_TOKEN=token, ALERTMANAGER_URL=AM, OPERATORS="U1"
    )
    async with SlackHarness(fake, service, settings) as harness:
        done = await asyncio.to_thread(_point_alertmanager_at, f"{harness.url}/alertmanager")
        assert done.returncode == 0, done.stderr[-2000:]
        yield harness


async def _exporter(path: str, body: dict[str, Any]) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.post(f"{EXPORTER}{path}", json=body)
        assert answer.status_code == 200, answer.text


def _posted(h: SlackHarness) -> list[dict[str, Any]]:
    return [m for m in h.fake.posted(CHANNEL) if not m.get("thread_ts")]


async def test_an_xid_79_on_a_node_is_answered_resolved_and_silenced(bot: SlackHarness) -> None:
    host = f"gpu-e2e-{uuid.uuid4().hex[:6]}"  # a group of its own: earlier runs' groups stay out of it
    labels = {
        "Hostname": host,
        "gpu": "0",
        "pci_bus_id": "00000000:3B:00.0",
        "err_code": "79",
        "err_msg": "GPU has fallen off the bus",
        "modelName": "NVIDIA H100 80GB HBM3",
    }
    await _exporter("/set", {"metric": "DCGM_FI_DEV_XID_ERRORS", "labels": labels, "value": 79})
    try:
        await bot.wait_for(lambda: any(host in json.dumps(m) for m in _posted(bot)), within=45)
    finally:
        await _exporter("/clear", {"metric": "DCGM_FI_DEV_XID_ERRORS", "labels": {"Hostname": host}})
    [message] = [m for m in _posted(bot) if host in json.dumps(m)]
    shown = json.dumps(message["blocks"], ensure_ascii=False)
    assert f"From alert GpuXidError on {host}" in shown and "IL-0415" in shown and f"ssh {host}" in shown
    await bot.wait_for(
        lambda: any(
            c.body.get("ts") == message["ts"] and "resolved at" in json.dumps(c.body)
            for c in bot.fake.calls("chat.update")
        ),
        within=45,
    )
    assert len([m for m in _posted(bot) if host in json.dumps(m)]) == 1  # resolved updated it, never reposted
    # Silence from Slack: Alertmanager then lists it, for the alert's name and host.
    value = buttons(message["blocks"])["silence_alert"]
    said = await click(
        bot, "silence_alert", value, user="U1", channel=CHANNEL, message_ts=message["ts"], ephemeral=False
    )
    assert not said, said  # nothing said privately: the thread says it
    async with httpx.AsyncClient(timeout=10) as http:
        silences = (await http.get(f"{AM}/api/v2/silences")).json()
    mine = [s for s in silences if any(m["name"] == "Hostname" and m["value"] == host for m in s["matchers"])]
    assert mine and mine[0]["status"]["state"] == "active" and mine[0]["createdBy"] == "incident-bot for U1"
    assert any("Silenced for 4 h by <@U1>" in str(m.get("text")) for m in bot.fake.posted(CHANNEL))
