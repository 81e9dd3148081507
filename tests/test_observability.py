"""Logs are structured and never carry a token; metrics render in Prometheus text format."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from bot.ops.logs import configure_logging, get_logger, redact
from bot.ops.metrics import Metrics


@pytest.fixture
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.usefixtures("_restore_logging")
def test_json_logs_redact_tokens_from_structlog_and_stdlib(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", "json")
    get_logger("incident_bot.test").info("posting", token="xoxb-1234567890-abcdef", channel="C1")
    logging.getLogger("slack_bolt").warning("auth with xapp-1-A111-222-abc and v0=0123456789abcdef0123 failed")
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines[0]["event"] == "posting"
    assert lines[0]["token"] == "xoxb-***"
    assert lines[0]["level"] == "info"
    assert "xapp-***" in lines[1]["event"] and "v0=***" in lines[1]["event"]
    assert "1234567890" not in json.dumps(lines)


def test_redact_leaves_ordinary_text_alone() -> None:
    assert redact("NCCL WARN xid 79 on gpu-a17") == "NCCL WARN xid 79 on gpu-a17"
    assert redact("token xoxp-9-9-abcdef") == "token xoxp-***"


def test_metrics_render_prometheus_text() -> None:
    metrics = Metrics()
    metrics.events.labels(type="message").inc()
    metrics.matches.labels(tier="exact").inc(2)
    metrics.match_latency.observe(0.012)
    text = metrics.render().decode()
    assert 'incident_bot_events_total{type="message"} 1.0' in text
    assert 'incident_bot_matches_total{tier="exact"} 2.0' in text
    assert "incident_bot_match_latency_seconds_bucket" in text
    assert Metrics().render() != metrics.render()  # registries are separate
