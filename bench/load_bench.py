"""Load benchmark for one bot process in HTTP mode: time to ack Slack-signed events over loopback.

    .venv/bin/python -m bench.load_bench [--seconds 8] [--levels 1,4,16,64]

What runs (all on 127.0.0.1, every loop bounded, the run stops by itself):

- the bot: ``python -m bot.cli run`` (HTTP mode, SQLite in a temp dir, JSON logs at INFO to a file, the
  bundled cases), its Web API pointed at the fake Slack Web API (``tests/fake_slack.py``) in this process;
- the baseline: a bare aiohttp endpoint in its own process that verifies the Slack signature and answers
  200, i.e. the floor any Slack app on this machine pays;
- the load: for each target and concurrency level, a SECOND process (this file with ``--load``) that keeps
  ``concurrency`` requests in flight for ``--seconds``, each a freshly signed ``event_callback`` (a new
  ``event_id``): channel chatter, with every tenth message a pasted ECC error the bot answers in a thread.

Reported per level: events acked per second, p50/p95/p99 time to ack (HTTP response time as the sender
sees it), errors, and for the bot the messages matched per second during the level (its ``/metrics``), which
shows whether the work behind the acks kept up. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
SECRET = "bench-signing-secret"  # noqa: S105 - a test value for a loopback-only benchmark
TOKEN = "xoxb-bench-token"  # noqa: S105 - a test value for a loopback-only benchmark
PASTE = (ROOT / "tests" / "fixtures" / "pastes" / "hw-ecc-pytorch-three-lines.txt").read_text()
CHATTER = "deploy of the eval job finished, numbers in the dashboard as usual"
START_DEADLINE = 60.0


# -- the load process ---------------------------------------------------------------------------------


def _envelope(seq: int) -> bytes:
    ts = f"{int(time.time())}.{seq % 1_000_000:06d}"
    event = {
        "type": "message",
        "channel": f"C{seq % 50:03d}",
        "user": "U1",
        "text": PASTE if seq % 10 == 0 else CHATTER,
        "ts": ts,
        "event_ts": ts,
        "team": "T1",
        "channel_type": "channel",
    }
    body = {
        "token": "legacy",
        "team_id": "T1",
        "api_app_id": "A1",
        "event": event,
        "type": "event_callback",
        "event_id": f"Ev{uuid.uuid4().hex[:12].upper()}",
        "event_time": int(time.time()),
        "authorizations": [{"team_id": "T1", "user_id": "UBOT", "is_bot": True}],
    }
    return json.dumps(body).encode()


async def _load(url: str, concurrency: int, seconds: float) -> dict[str, Any]:
    import aiohttp
    from slack_sdk.signature import SignatureVerifier

    signer = SignatureVerifier(SECRET)
    latencies: list[float] = []
    errors = 0
    counter = iter(range(1, 1 << 62))
    deadline = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=30)) as session:

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                body = _envelope(next(counter))
                stamp = str(int(time.time()))
                headers = {
                    "Content-Type": "application/json",
                    "X-Slack-Request-Timestamp": stamp,
                    "X-Slack-Signature": signer.generate_signature(timestamp=stamp, body=body.decode()),
                }
                started = time.perf_counter()
                try:
                    async with session.post(url, data=body, headers=headers) as response:
                        await response.read()
                        ok = response.status == 200
                except (aiohttp.ClientError, TimeoutError):
                    ok = False
                if ok:
                    latencies.append(time.perf_counter() - started)
                else:
                    errors += 1

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - began
    return {"acked": len(latencies), "errors": errors, "elapsed": elapsed, "latencies": latencies}


def run_load(url: str, concurrency: int, seconds: float) -> None:
    result = asyncio.run(_load(url, concurrency, seconds))
    lat = sorted(result.pop("latencies"))
    if lat:
        cuts = statistics.quantiles(lat, n=100, method="inclusive")
        result.update(p50=cuts[49], p95=cuts[94], p99=cuts[98])
    print(json.dumps(result))


# -- the baseline server ------------------------------------------------------------------------------


def run_baseline(port: int) -> None:
    from aiohttp import web
    from slack_sdk.signature import SignatureVerifier

    verifier = SignatureVerifier(SECRET)

    async def events(request: web.Request) -> web.Response:
        body = await request.text()
        if not verifier.is_valid(
            body, request.headers.get("X-Slack-Request-Timestamp", ""), request.headers.get("X-Slack-Signature", "")
        ):
            return web.Response(status=401)
        return web.Response(text="")

    async def ready(_: web.Request) -> web.Response:
        return web.Response(text="ready")

    app = web.Application()
    app.router.add_post("/slack/events", events)
    app.router.add_get("/readyz", ready)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


# -- the driver ---------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_DEADLINE
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{url}: the server exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{url}: not ready within {START_DEADLINE}s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(15)


def _matched(url: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("incident_bot_matches_total")
    )


def _one_level(url: str, concurrency: int, seconds: float) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.load_bench",
            "--load",
            f"{url}/slack/events",
            "--concurrency",
            str(concurrency),
            "--seconds",
            str(seconds),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=seconds + 60,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="duration of each level (default 8)")
    parser.add_argument("--levels", default="1,4,16,64", help="concurrency levels (default 1,4,16,64)")
    parser.add_argument("--load", help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--baseline-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.load:
        run_load(args.load, args.concurrency, args.seconds)
        return 0
    if args.baseline_server:
        run_baseline(args.baseline_server)
        return 0

    sys.path.insert(0, str(ROOT / "tests"))
    from fake_slack import FakeSlack

    levels = [int(x) for x in args.levels.split(",")]
    rows: list[tuple[str, int, dict[str, Any], float | None]] = []
    with tempfile.TemporaryDirectory() as tmp, FakeSlack() as fake:
        bot_port, base_port = _free_port(), _free_port()
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": tmp,
            "PYTHONPATH": str(ROOT),
            "SLACK_BOT_TOKEN": TOKEN,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": fake.base_url,
            "HOST": "127.0.0.1",
            "PORT": str(bot_port),
            "DATA_DIR": tmp,
            "CASES_DIR": str(ROOT / "cases"),
            "LOG_FORMAT": "json",
            "LOG_LEVEL": "INFO",
        }
        with open(Path(tmp) / "bot.log", "wb") as log:
            bot = subprocess.Popen([sys.executable, "-m", "bot.cli", "run"], cwd=tmp, env=env, stdout=log, stderr=log)
            base = subprocess.Popen(
                [sys.executable, "-m", "bench.load_bench", "--baseline-server", str(base_port)], cwd=ROOT
            )
            try:
                targets = {"bot": f"http://127.0.0.1:{bot_port}", "baseline": f"http://127.0.0.1:{base_port}"}
                for url in targets.values():
                    _wait_ready(url, bot if url.endswith(str(bot_port)) else base)
                _one_level(targets["bot"], 2, 1.0)  # warm-up: auth.test, first connections, first matches
                for concurrency in levels:
                    for name, url in targets.items():
                        before = _matched(url) if name == "bot" else None
                        result = _one_level(url, concurrency, args.seconds)
                        matched = (_matched(url) - before) / result["elapsed"] if before is not None else None
                        rows.append((name, concurrency, result, matched))
                        print(f"  {name} c={concurrency}: {result['acked'] / result['elapsed']:.0f}/s", file=sys.stderr)
            finally:
                _stop(bot)
                _stop(base)
        posted = len(fake.calls("chat.postMessage"))
    print(
        f"\nLoad benchmark: {args.seconds:g} s per level, {os.cpu_count()} CPUs, Python {sys.version.split()[0]};"
        f" 1 in 10 events a pasted ECC error ({posted} replies posted to the fake Web API)\n"
    )
    print("| target | concurrency | events/s | p50 ms | p95 ms | p99 ms | errors | messages matched/s | vs baseline |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rates = {(name, c): r["acked"] / r["elapsed"] for name, c, r, _ in rows}
    for name, concurrency, result, matched in rows:
        rate = rates[(name, concurrency)]
        ratio = f"{rate / rates[('baseline', concurrency)]:.2f}x" if name == "bot" else "1.00x"
        cells = [f"{result.get(k, float('nan')) * 1000:.1f}" for k in ("p50", "p95", "p99")]
        shown = f"{matched:.0f}" if matched is not None else "-"
        print(f"| {name} | {concurrency} | {rate:.0f} | {' | '.join(cells)} | {result['errors']} | {shown} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
