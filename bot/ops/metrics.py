"""Prometheus metrics for one bot process, in its own registry (several apps in one test process never
collide). ``render`` gives the text exposition format served on ``/metrics``."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.events = Counter("incident_bot_events", "Slack events received, by type", ["type"], registry=self.registry)
        self.commands = Counter(
            "incident_bot_commands", "/incident commands, by verb", ["verb"], registry=self.registry
        )
        self.matches = Counter(
            "incident_bot_matches", "Pastes matched, by tier of the best case", ["tier"], registry=self.registry
        )
        self.replies = Counter(
            "incident_bot_replies_posted", "Replies posted, by source", ["source"], registry=self.registry
        )
        self.match_latency = Histogram(
            "incident_bot_match_latency_seconds",
            "Time to match one paste",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.digest_runs = Counter(
            "incident_bot_digest_runs", "Digest runs, by outcome", ["status"], registry=self.registry
        )
        self.digest_failures = Counter(
            "incident_bot_digest_failures", "Digest runs that failed", registry=self.registry
        )
        self.slack_errors = Counter(
            "incident_bot_slack_api_errors",
            "Slack Web API errors, by method and error",
            ["method", "error"],
            registry=self.registry,
        )
        self.library_reloads = Counter(
            "incident_bot_library_reloads", "Case library reloads, by outcome", ["outcome"], registry=self.registry
        )
        self.busy = Counter(
            "incident_bot_busy",
            "Pastes not matched because matching was at capacity (explicit: told to retry; unprompted: dropped)",
            ["kind"],
            registry=self.registry,
        )
        self.scheduler_lookups = Counter(
            "incident_bot_scheduler_lookups",
            "Scheduler lookups for the nodes a reply names, by source and outcome (ok, timeout, unreachable, garbage)",
            ["source", "outcome"],
            registry=self.registry,
        )
        self.broken_case_files = Gauge(
            "incident_bot_broken_case_files",
            "Case files the last load or reload rejected (their previous version, if any, keeps serving)",
            registry=self.registry,
        )
        self.example_lines = Gauge(
            "incident_bot_example_lines",
            "Confirmed example lines the matcher uses (distinct lines per case, unexpired)",
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
