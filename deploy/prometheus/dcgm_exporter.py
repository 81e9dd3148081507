"""A tiny stand-in for NVIDIA dcgm-exporter, FOR TESTS: GET /metrics shows what a test has set.

Names, help and labels as dcgm-exporter 4.x prints them (etc/default-counters.csv, rendermetrics): gpu, UUID,
pci_bus_id, device, modelName, Hostname; for the Xid also err_code and err_msg, filled in from the value.

    POST /set    {"metric": "DCGM_FI_DEV_XID_ERRORS", "labels": {"Hostname": "gpu-a17"}, "value": 79}
    POST /clear  {"metric": "DCGM_FI_DEV_XID_ERRORS", "labels": {"Hostname": "gpu-a17"}}  (every series whose
                 labels include these; no metric: every metric)

Listens on 127.0.0.1:${DCGM_PORT:-9400}.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric

# name -> (type, help) from default-counters.csv; the ECC counter is typed gauge here, as prometheus_client would
# rename a counter to ..._total (PromQL ignores the type; dcgm-exporter says counter).
METRICS = {
    "DCGM_FI_DEV_XID_ERRORS": ("gauge", "Value of the last XID error encountered."),
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": ("gauge", "Total number of double-bit volatile ECC errors."),
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": ("gauge", "Whether remapping of rows has failed"),
}
# A few of dcgm-exporter's xidErrCodeToText entries (internal/pkg/collector/xid_errors.go).
XID_TEXT = {0: "No Error", 13: "Graphics Engine Exception", 31: "GPU memory page fault", 48: "Double Bit ECC Error",
            79: "GPU has fallen off the bus", 94: "Contained ECC error", 95: "Uncontained ECC error"}  # fmt: skip
Labels = tuple[tuple[str, str], ...]
series: dict[str, dict[Labels, float]] = {name: {} for name in METRICS}
lock = threading.Lock()


def full_labels(metric: str, given: dict[str, str], value: float) -> dict[str, str]:
    gpu = given.get("gpu", "0")
    uuid = f"GPU-00000000-0000-0000-0000-00000000000{gpu}"
    labels = {"gpu": gpu, "UUID": uuid, "pci_bus_id": f"00000000:0{gpu}:00.0", "device": f"nvidia{gpu}",
              "modelName": "NVIDIA H100 80GB HBM3", "Hostname": socket.gethostname()}  # fmt: skip
    if metric == "DCGM_FI_DEV_XID_ERRORS":
        labels["err_code"] = str(int(value))
        labels["err_msg"] = XID_TEXT.get(int(value), "Unknown Error")
    return labels | given


class Collector:
    def collect(self) -> Iterator[Metric]:
        with lock:
            snapshot = {name: dict(values) for name, values in series.items()}
        for name, values in snapshot.items():
            kind, help_text = METRICS[name]
            family = Metric(name, help_text, kind)
            for labels, value in values.items():
                family.add_sample(name, dict(labels), value)
            yield family


registry = CollectorRegistry(auto_describe=False)
registry.register(Collector())


class Handler(BaseHTTPRequestHandler):
    def reply(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.split("?")[0] != "/metrics":
            return self.reply(404, b'{"error": "not found"}')
        self.reply(200, generate_latest(registry), CONTENT_TYPE_LATEST)

    def do_POST(self) -> None:
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            metric = body.get("metric")
            given = {str(k): str(v) for k, v in (body.get("labels") or {}).items()}
            if metric is not None and metric not in METRICS:
                raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
            if self.path == "/set":
                if metric is None:
                    raise ValueError("/set needs a metric")
                value = float(body["value"])
                labels = tuple(sorted(full_labels(metric, given, value).items()))
                with lock:
                    series[metric][labels] = value
                return self.reply(200, json.dumps({"set": dict(labels), "value": value}).encode())
            if self.path == "/clear":
                removed = 0
                with lock:
                    for name in [metric] if metric else list(METRICS):
                        for labels in [ls for ls in series[name] if given.items() <= dict(ls).items()]:
                            del series[name][labels]
                            removed += 1
                return self.reply(200, json.dumps({"removed": removed}).encode())
            self.reply(404, b'{"error": "not found"}')
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.reply(400, json.dumps({"error": str(exc)}).encode())

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return


def main() -> None:
    port = int(os.environ.get("DCGM_PORT", "9400"))
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"dcgm_exporter stand-in on http://127.0.0.1:{port}/metrics", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
