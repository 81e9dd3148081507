"""Alerts in: Alertmanager's webhook (payload version 4) on the bot's listener, each firing alert answered
with its case and runbook like a pasted log, one message per node and group, resolved notifications
updating it. Over real HTTP into the bot's own server and the fake Slack Web API, on SQLite and PostgreSQL.
The end-to-end run with real Prometheus and Alertmanager processes is in ``test_alerts_e2e.py``."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from slack_harness import HarnessSlack, SlackHarness, harness_settings

from bot.app.service import IncidentService
from bot.library.case_store import CaseLibrary
from bot.matching.alerts import NotificationError, alert_text, read_notification
from bot.slack.alerts import authorized
from bot.storage import Storage

NOW = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
TOKEN = "alertmanager-test-token-0123456789"
CHANNEL = "CALERTS"


def alert(
    host: str, *, xid: str = "79", status: str = "firing", name: str = "GpuXidError", fp: str = ""
) -> dict[str, Any]:
    return {
        "status": status,
        "labels": {
            "alertname": name,
            "Hostname": host,
            "gpu": "3",
            "err_code": xid,
            "err_msg": "GPU has fallen off the bus" if xid == "79" else "",
            "pci_bus_id": "00000000:3B:00.0",
            "modelName": "NVIDIA H100 80GB HBM3",
        },
        "annotations": {"summary": f"Xid {xid} on {host} GPU 3"},
        "startsAt": "2026-11-30T01:00:00Z",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus.example:9090/graph?g0.expr=DCGM_FI_DEV_XID_ERRORS",
        "fingerprint": fp or f"fp-{host}-{xid}",
    }


def notification(
    alerts: list[dict[str, Any]], group: str = '{}:{alertname="GpuXidError"}', **extra: Any
) -> dict[str, Any]:
    status = "firing" if any(a["status"] == "firing" for a in alerts) else "resolved"
    return {
        "version": "4",
        "groupKey": group,
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "incident-bot",
        "groupLabels": {"alertname": "GpuXidError"},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager.example:9093",
        "alerts": alerts,
        **extra,
    }


# -- pure parts ---------------------------------------------------------------------------------------------


def test_a_dcgm_xid_alert_reads_as_the_line_the_library_knows() -> None:
    read = read_notification(notification([alert("GPU-A17")]))
    [one] = read.alerts
    assert one.host() == "gpu-a17" and one.host({"gpu-a17": "node-17"}) == "node-17"
    text = alert_text(one, one.host())
    assert "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus" in text
    with pytest.raises(NotificationError):
        read_notification({"version": "3", "alerts": []})
    with pytest.raises(NotificationError):
        read_notification(["not", "an", "object"])


def test_only_the_configured_credential_is_accepted() -> None:
    assert authorized(f"Bearer {TOKEN}", TOKEN, None, None)
    assert not authorized("Bearer wrong", TOKEN, None, None)
    assert not authorized("", TOKEN, None, None) and not authorized(f"Basic {TOKEN}", TOKEN, None, None)
    basic = base64.b64encode(b"am:secret").decode()
    assert authorized(f"Basic {basic}", None, "am", "secret") and not authorized(f"Basic {basic}", None, "am", "other")


# -- over HTTP ---------------------------------------------------------------------------------------------


@pytest.fixture
async def bot(fake: HarnessSlack, storage: Storage, library: CaseLibrary) -> AsyncIterator[SlackHarness]:
    service = IncidentService(library, storage, deadline_s=20.0, now=lambda: NOW)
    settings = harness_settings(fake, ALERT_CHANNEL=CHANNEL, ALERTMANAGER_TOKEN=TOKEN)
    async with SlackHarness(fake, service, settings) as harness:
        yield harness


async def send(h: SlackHarness, body: Any, token: str = TOKEN, raw: bytes | None = None) -> httpx.Response:
    assert h.http is not None
    data = raw if raw is not None else json.dumps(body).encode()
    return await h.http.post("/alertmanager", content=data, headers={"Authorization": f"Bearer {token}"})


def _posted(h: SlackHarness) -> list[dict[str, Any]]:
    return h.fake.posted(CHANNEL)


def _text(message: dict[str, Any]) -> str:
    return json.dumps({"text": message.get("text"), "blocks": message.get("blocks")}, ensure_ascii=False)


async def test_refusals_say_why_and_store_nothing(bot: SlackHarness, storage: Storage) -> None:
    assert (await send(bot, notification([alert("gpu-a17")]), token="wrong")).status_code == 401
    assert (await send(bot, None, raw=b"{not json")).status_code == 400
    assert (await send(bot, {"version": "3", "alerts": []})).status_code == 400
    assert (await send(bot, None, raw=b"x" * (3 << 20))).status_code == 413
    assert storage.pending_alert_notifications() == [] and not _posted(bot)


async def test_an_xid_79_alert_gets_the_case_node_and_first_step_of_the_pasted_log(bot: SlackHarness) -> None:
    response = await send(bot, notification([alert("gpu-a17")]))
    assert response.status_code == 200 and response.json() == {"status": "stored"}
    await bot.wait_for(lambda: _posted(bot))
    [message] = _posted(bot)
    shown = _text(message)
    assert "From alert GpuXidError on gpu-a17" in shown and "IL-0415" in shown
    assert "ssh gpu-a17" in shown  # the first step with the node filled, as for a pasted Xid 79 line
    assert "prometheus.example:9090/graph" in shown
    line = "Mar  5 11:40:02 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off"
    pasted = bot.service.match(line + "\n", slack_encoded=False)
    assert pasted.reply_case_ids[:1] == ["IL-0415"]
    # Re-sent (repeat_interval, a retry, another replica's copy): posted once.
    assert (await send(bot, notification([alert("gpu-a17")]))).status_code == 200
    await bot.settle()
    # A new alert in the group goes into the thread; resolved updates the message, never reposts.
    await send(bot, notification([alert("gpu-a17"), alert("gpu-a17", xid="48", fp="fp-48")]))
    await bot.wait_for(lambda: any(str(m.get("thread_ts")) == message["ts"] for m in _posted(bot)))
    await send(
        bot,
        notification([alert("gpu-a17", status="resolved"), alert("gpu-a17", xid="48", fp="fp-48", status="resolved")]),
    )
    await bot.wait_for(lambda: any(c.body.get("ts") == message["ts"] for c in bot.fake.calls("chat.update")))
    [update] = [c.body for c in bot.fake.calls("chat.update") if c.body.get("ts") == message["ts"]]
    assert "resolved at 01:00 UTC" in json.dumps(update)
    top = [m for m in _posted(bot) if not m.get("thread_ts")]
    assert len(top) == 1


async def test_alerts_alertmanager_left_out_are_said(bot: SlackHarness) -> None:
    await send(bot, notification([alert("gpu-a19")], group="g-truncated", truncatedAlerts=7))
    await bot.wait_for(lambda: _posted(bot))
    assert "Alertmanager left out 7 more in this notification" in _text(_posted(bot)[0])


async def test_an_unknown_alert_is_posted_plainly(bot: SlackHarness) -> None:
    unknown = alert("gpu-b02", xid="0", name="FanSpeedLow")
    unknown["annotations"] = {"summary": "fan 3 at 200 rpm"}
    await send(bot, notification([unknown], group='{}:{alertname="FanSpeedLow"}'))
    await bot.wait_for(lambda: _posted(bot))
    assert "From alert FanSpeedLow on gpu-b02: no known case" in _text(_posted(bot)[0])


async def test_five_hundred_alerts_post_a_summary_and_a_few_messages(bot: SlackHarness) -> None:
    many = [alert(f"gpu-{n:03d}") for n in range(500)]
    await send(bot, notification(many, truncatedAlerts=12))
    await bot.wait_for(lambda: len(_posted(bot)) >= 4, within=60)
    await bot.settle()
    posted = _posted(bot)
    assert len(posted) == 4
    summary = _text(posted[0])
    assert "500 alerts GpuXidError on 500 nodes" in summary and "left out 12 more" in summary


def test_routes_send_an_alert_to_its_channel() -> None:
    from bot.app.alerts import AlertDesk, parse_routes

    routes = parse_routes("cluster=b:CB, bad, team=ml:CML")
    assert routes == [("cluster", "b", "CB"), ("team", "ml", "CML")]
    desk = AlertDesk(None, CHANNEL, routes)  # type: ignore[arg-type]  # routing reads no service
    read = read_notification(notification([{**alert("gpu-a17"), "labels": {"alertname": "X", "team": "ml"}}]))
    assert desk.channel_for(read.alerts) == "CML"
    assert desk.channel_for(read_notification(notification([alert("gpu-a17")])).alerts) == CHANNEL


async def test_two_replicas_post_once_and_node_memory_counts_the_group_once(
    fake: HarnessSlack, storage: Storage, library: CaseLibrary
) -> None:
    settings = harness_settings(fake, ALERT_CHANNEL=CHANNEL, ALERTMANAGER_TOKEN=TOKEN)
    one = IncidentService(library, storage, deadline_s=20.0, now=lambda: NOW)
    two = IncidentService(library, storage, deadline_s=20.0, now=lambda: NOW)
    async with SlackHarness(fake, one, settings) as first, SlackHarness(fake, two, settings) as second:
        body = notification([alert("gpu-a17")])
        assert (await send(first, body)).status_code == 200 and (await send(second, body)).status_code == 200
        await first.wait_for(lambda: _posted(first))
        await first.settle()
        await second.settle()
        await send(first, body)  # and Alertmanager's repeat
        await first.settle()
    assert len(_posted(first)) == 1
    assert len(storage.node_events(NOW - timedelta(days=1), ("gpu-a17",))) == 1
