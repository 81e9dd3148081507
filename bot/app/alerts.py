"""Alerts in: each alert group's alerts on one node become one paste (``bot.matching.alerts``), answered by
the same matcher, suspects and runbooks as a pasted log, and one message per node and group.

What to post is decided here, from storage (so replicas agree): the first notification of a (group, node)
claims its message and posts it; a re-send with the same alerts posts nothing; new alerts in the group go
into the message's thread; a resolved notification updates the message. A notification with more than
``SUMMARY_AFTER`` nodes posts one summary and messages for the first ``SHOWN`` nodes only (Slack allows
about one message per second per channel).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.app.service import IncidentService
from bot.matching.alerts import (
    Alert,
    Notification,
    NotificationError,
    alert_text,
    firing_value,
    group_alerts,
    pci_of,
    read_notification,
)
from bot.model.case import Lang
from bot.model.results import MatchResult, Reply, SuspectInfo
from bot.replies.blocks import context
from bot.replies.mrkdwn import escape_mrkdwn

__all__ = ["AlertDesk", "AlertPlan", "NotificationError", "parse_routes", "read_notification", "resolved_block"]
SUMMARY_AFTER = 5
SHOWN = 3


@dataclass(frozen=True, slots=True)
class AlertPlan:
    """One message's worth: the node, its alerts in this notification, and the answer."""

    node: str
    alerts: list[Alert]
    reply: Reply
    result: MatchResult
    firing: bool  # any alert still firing (else every one resolved)

    @property
    def fingerprints(self) -> str:
        return ",".join(sorted(a.fingerprint for a in self.alerts if a.status == "firing"))


def parse_routes(text: str) -> list[tuple[str, str, str]]:
    """``ALERT_ROUTES``: ``label=value:CHANNEL`` pairs, comma-separated, first match wins."""
    routes = []
    for part in text.split(","):
        rule, _, channel = part.strip().rpartition(":")
        label, equals, value = rule.partition("=")
        if equals and channel.strip():
            routes.append((label.strip(), value.strip(), channel.strip()))
    return routes


class AlertDesk:
    def __init__(
        self,
        service: IncidentService,
        channel: str,
        routes: Sequence[tuple[str, str, str]] = (),
        aliases: Mapping[str, str] | None = None,
        langs: Sequence[Lang] = ("en", "ko"),
    ) -> None:
        self.service = service
        self.channel = channel
        self.routes = list(routes)
        self.aliases = dict(aliases or {})
        self.langs = list(langs)

    def channel_for(self, alerts: Sequence[Alert]) -> str:
        for label, value, channel in self.routes:
            if any(alert.labels.get(label) == value for alert in alerts):
                return channel
        return self.channel

    def plans(self, notification: Notification) -> list[AlertPlan]:
        plans = []
        for node, alerts in group_alerts(notification, self.aliases).items():
            host = node or "an unnamed host"
            text = "".join(alert_text(a, host, firing_value(a)) for a in alerts[:20])
            result = self.service.match(text, slack_encoded=False)
            result = self._with_node(result, node, alerts[0])
            reply = self.render(result, alerts, node, notification.truncated)
            plans.append(AlertPlan(node, alerts, reply, result, any(a.status == "firing" for a in alerts)))
        return plans

    @staticmethod
    def _with_node(result: MatchResult, node: str, alert: Alert) -> MatchResult:
        """The suspects from the alert's labels, not from text (an alert names its host and GPU)."""
        if not node or not result.matches:
            return result
        fills = {"node": node}
        pci = pci_of(alert.labels)
        gpu = alert.labels.get("gpu", "")
        summary = f"failed on {node}"
        if pci:
            fills["pci"] = f"{pci}.0"
            summary += f" · GPU PCI {pci}"
        if gpu.isdigit():
            fills["gpu"] = gpu
        info = SuspectInfo(
            failed=True, summary=summary, hosts={node: 1}, gpus=[int(gpu)] if gpu.isdigit() else [], fills=fills
        )
        return result.model_copy(update={"suspects": info})

    def render(self, result: MatchResult, alerts: Sequence[Alert], node: str, truncated: int = 0) -> Reply:
        """The reply with a lead saying where it comes from, and the alert's link; an alert the library does
        not know is posted plainly ("no known case"), never dropped."""
        first = alerts[0]
        where = f" on {node}" if node else ""
        link = first.generator_url if first.generator_url.startswith(("http://", "https://")) else ""
        said = f"From alert {first.name}{where}" + (f" ({len(alerts)} alerts)" if len(alerts) > 1 else "")
        if truncated:
            said += f" (Alertmanager left out {truncated} more in this notification)"
        lead_md = f"*{escape_mrkdwn(said)}*" + (
            f" · <{link}|source>" if link and "|" not in link and ">" not in link else ""
        )
        if result.best is None or not result.reply:
            labels = ", ".join(f"{k}={v}" for k, v in list(first.labels.items())[:8])
            plain = f"{said}: no known case.\n{labels}"
            blocks = [
                context(lead_md),
                {"type": "section", "text": {"type": "mrkdwn", "text": escape_mrkdwn(plain)[:2900]}},
            ]
            return Reply(text=f"{said}: no known case", blocks=blocks, plain=plain, hosts=[node] if node else [])
        reply = self.service.render_match(result, self.langs, explicit=True)
        hosts = [node] if node else []
        return reply.model_copy(
            update={
                "blocks": [context(lead_md), *reply.blocks],
                "text": f"{said}: {reply.text}",
                "plain": f"{said}\n{reply.plain}",
                "hosts": hosts,
                "langs": list(self.langs),
            }
        )


def resolved_block(when: str) -> dict[str, object]:
    return context(f"✅ resolved at {escape_mrkdwn(when)}")
