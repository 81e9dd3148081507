"""An Alertmanager notification (webhook payload version 4) read into alerts, and each alert written as a
paste in the words the library knows, so the same matcher, tiers, suspects and runbooks answer it. Pure.

The text says what the alert's labels say, in the shapes the case signatures read: an Xid from NVIDIA's
dcgm-exporter (``DCGM_FI_DEV_XID_ERRORS``, its value the last Xid, ``err_code``/``err_msg`` in recent
versions; ``DCGM_EXP_XID_ERRORS_COUNT`` by ``xid``) becomes ``NVRM: Xid (PCI:…): 79, …`` prefixed by the
host, an uncorrectable ECC count becomes the ECC wording. It is never shown as a log line someone printed:
the reply says it comes from an alert.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_ALERTS = 1000  # alerts read from one notification (Alertmanager's max_alerts may be 0: unlimited)
_HOST_LABELS = ("Hostname", "hostname", "node", "instance", "host", "kubernetes_node", "nodename")
_SAFE = re.compile(r"[^A-Za-z0-9._:/=@%+,() -]")
_XID_NAMES = {"79": "GPU has fallen off the bus", "48": "DBE (Double Bit Error) ECC Error", "74": "NVLink Error"}


@dataclass(frozen=True, slots=True)
class Alert:
    status: str  # "firing" or "resolved"
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    fingerprint: str
    starts_at: str = ""
    ends_at: str = ""
    generator_url: str = ""

    @property
    def name(self) -> str:
        return self.labels.get("alertname", "alert")

    def host(self, aliases: Mapping[str, str] | None = None) -> str:
        for key in _HOST_LABELS:
            value = self.labels.get(key, "").strip()
            if value:
                value = value.split(":")[0] if key == "instance" else value
                found = value.lower()
                return (aliases or {}).get(found, found)
        return ""


@dataclass(frozen=True, slots=True)
class Notification:
    version: str
    group_key: str
    status: str
    receiver: str
    alerts: list[Alert] = field(default_factory=list)
    truncated: int = 0  # truncatedAlerts: how many Alertmanager left out
    external_url: str = ""


class NotificationError(ValueError):
    """A body that is not an Alertmanager webhook notification (version 4)."""


def _strings(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k)[:100]: str(v)[:1000] for k, v in list(value.items())[:64]}


def read_notification(data: object) -> Notification:
    if not isinstance(data, dict) or str(data.get("version")) != "4" or not isinstance(data.get("alerts"), list):
        raise NotificationError("not an Alertmanager webhook notification (version 4)")
    alerts = []
    for raw in data["alerts"][:MAX_ALERTS]:
        if not isinstance(raw, dict):
            continue
        alerts.append(
            Alert(
                status=str(raw.get("status") or "firing"),
                labels=_strings(raw.get("labels")),
                annotations=_strings(raw.get("annotations")),
                fingerprint=str(raw.get("fingerprint") or "")[:64],
                starts_at=str(raw.get("startsAt") or "")[:40],
                ends_at=str(raw.get("endsAt") or "")[:40],
                generator_url=str(raw.get("generatorURL") or "")[:2000],
            )
        )
    truncated = data.get("truncatedAlerts")
    extra = max(0, len(data["alerts"]) - MAX_ALERTS)
    return Notification(
        version="4",
        group_key=str(data.get("groupKey") or "")[:2000],
        status=str(data.get("status") or ""),
        receiver=str(data.get("receiver") or ""),
        alerts=alerts,
        truncated=(truncated if isinstance(truncated, int) and truncated > 0 else 0) + extra,
        external_url=str(data.get("externalURL") or "")[:2000],
    )


def _clean(value: str) -> str:
    return _SAFE.sub(" ", value)[:300]


def pci_of(labels: Mapping[str, str]) -> str | None:
    """dcgm-exporter's pci_bus_id (00000000:3B:00.0) as the driver prints it in an Xid line (0000:3b:00), or
    None when the label is missing or not a bus id: the Xid line and the suspects read the same value."""
    raw = labels.get("pci_bus_id", "").lower()
    found = re.fullmatch(r"(?:0{4})?([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})(?:\.[0-7])?", raw)
    return f"{found.group(1)}:{found.group(2)}:{found.group(3)}" if found else None


def alert_text(alert: Alert, host: str, value: str = "") -> str:
    """The paste an alert stands for: what its labels and annotations say, in the words the library knows."""
    labels = alert.labels
    name = labels.get("__name__", "") or labels.get("metric", "")
    lines = []
    xid = labels.get("err_code") or labels.get("xid") or value
    is_xid = "XID" in alert.name.upper() or "XID" in name.upper() or labels.get("err_code") or labels.get("xid")
    if is_xid and xid and xid.isdigit() and xid != "0":
        message = labels.get("err_msg") or _XID_NAMES.get(xid, "")
        lines.append(
            f"{host} kernel: NVRM: Xid (PCI:{pci_of(labels) or '0000:00:00'}): {xid}, {_clean(message)}".rstrip(", ")
        )
    if any(word in (alert.name + name).upper() for word in ("ECC", "DBE")):
        lines.append(f"{host}: uncorrectable ECC error encountered (GPU {_clean(labels.get('gpu', '?'))})")
    if "ROW_REMAP" in (alert.name + name).upper() or "REMAP" in alert.name.upper():
        lines.append(f"{host}: GPU row remapping failure")
    for key in ("summary", "description"):
        if text := alert.annotations.get(key):
            lines.append(_clean(text))
    return "\n".join(lines) + "\n"


def firing_value(alert: Alert) -> str:
    """The alert's value when its annotations carry it (``{{ $value }}`` in a rule's annotation ``value``)."""
    return alert.annotations.get("value", "").split(".")[0].strip()


def group_alerts(notification: Notification, aliases: Mapping[str, str] | None = None) -> dict[str, list[Alert]]:
    """The notification's alerts by node (one message per node and group); alerts with no host under ``""``."""
    grouped: dict[str, list[Alert]] = {}
    for alert in notification.alerts:
        grouped.setdefault(alert.host(aliases), []).append(alert)
    return grouped


def as_json_labels(alert: Alert) -> dict[str, Any]:
    return dict(alert.labels)
