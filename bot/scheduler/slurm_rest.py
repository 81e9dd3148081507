"""The scheduler read through slurmrestd (``SLURM_REST_URL``), with a JWT from a file re-read whenever it
changes, so an expiring token can be rotated without a restart (``scontrol token lifespan=…`` into
``SLURM_TOKEN_FILE``). Written against Slurm 22.05's ``openapi/v0.0.38``: ``GET /slurm/v0.0.38/nodes``
and ``/jobs``, read only (22.05's REST cannot update nodes). Accounting (failed jobs in the last 24 h)
needs slurmdbd's REST plugin, which this adapter does not read: that part of the line is left out.

Rights: the token's user sees every node; under ``PrivateData=jobs`` it sees only its own jobs unless it
is an operator or admin.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import httpx

from bot.model.nodestate import NodeState, SchedulerError
from bot.scheduler.hostlist import expand
from bot.scheduler.slurm_state import from_epoch, from_words

API = "v0.0.38"
_BODY_CAP = 16 << 20
_RUNNING = {"RUNNING", "COMPLETING"}


class TokenFile:
    """The token in ``path``, read again when the file's mtime or size changes."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._seen: tuple[float, int] | None = None
        self._token = ""
        self._lock = threading.Lock()

    def get(self) -> str:
        try:
            stat = os.stat(self._path)
        except OSError as missing:
            raise SchedulerError("unreachable", f"token file: {missing.strerror}") from missing
        key = (stat.st_mtime, stat.st_size)
        with self._lock:
            if key != self._seen:
                with open(self._path, encoding="utf-8") as handle:
                    text = handle.read(64 << 10).strip()
                self._token = text.removeprefix("SLURM_JWT=")
                self._seen = key
            return self._token


class SlurmRest:
    name = "slurm-rest"

    def __init__(self, url: str, user: str, token: TokenFile, *, transport: httpx.BaseTransport | None = None) -> None:
        self._base = url.rstrip("/")
        self._user = user
        self._token = token
        self._transport = transport

    def _get(self, path: str, client: httpx.Client) -> dict[str, Any]:
        headers = {"X-SLURM-USER-NAME": self._user, "X-SLURM-USER-TOKEN": self._token.get()}
        try:
            with client.stream("GET", f"{self._base}/slurm/{API}/{path}", headers=headers) as response:
                body = b""
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > _BODY_CAP:
                        raise SchedulerError("garbage", f"{path}: body over {_BODY_CAP} bytes")
                status = response.status_code
        except httpx.TimeoutException as slow:
            raise SchedulerError("timeout", path) from slow
        except httpx.HTTPError as down:
            raise SchedulerError("unreachable", type(down).__name__) from down
        if status != 200:
            raise SchedulerError("unreachable", f"{path}: HTTP {status}")
        try:
            data = httpx.Response(200, content=body).json()
        except ValueError as garbled:
            raise SchedulerError("garbage", f"{path}: not JSON") from garbled
        if not isinstance(data, dict):
            raise SchedulerError("garbage", f"{path}: not an object")
        return data

    def nodes(self, names: Sequence[str], timeout_s: float) -> dict[str, NodeState | None]:
        found: dict[str, NodeState | None] = {n: None for n in names}
        if not names:
            return found
        with httpx.Client(timeout=httpx.Timeout(timeout_s / 2), transport=self._transport) as client:
            nodes = self._get("nodes", client).get("nodes")
            jobs = self._get("jobs", client).get("jobs")
        if not isinstance(nodes, list) or not isinstance(jobs, list):
            raise SchedulerError("garbage", "no nodes or jobs list")
        users: dict[str, list[str]] = {}
        for job in jobs:
            if isinstance(job, dict) and job.get("job_state") in _RUNNING and isinstance(job.get("nodes"), str):
                for host in expand(job["nodes"]):
                    if host in found:
                        users.setdefault(host, []).append(str(job.get("user_name") or "?"))
        for node in nodes:
            if not isinstance(node, dict) or node.get("name") not in found:
                continue
            name = str(node["name"])
            flags = node.get("state_flags") or []
            if not isinstance(flags, list):
                raise SchedulerError("garbage", "state_flags")
            here = users.get(name, [])
            state, not_responding = from_words(str(node.get("state") or "unknown"), [str(f) for f in flags], len(here))
            changed = node.get("reason_changed_at")
            found[name] = NodeState(
                name=name,
                state=state,
                not_responding=not_responding,
                reason=str(node.get("reason") or "") or None,
                reason_by=(str(node.get("reason_set_by_user") or "") or None) if node.get("reason") else None,
                reason_at=from_epoch(changed) if isinstance(changed, int) else None,
                jobs=len(here),
                users=tuple(sorted(set(here))),
                failed_24h=None,
                raw_state="+".join([str(node.get("state") or ""), *map(str, flags)]),
            )
        return found
