"""Votes benchmark: learning off the acknowledgement path, with ~3,000 stored example lines.

    .venv/bin/python -m bench.votes_bench [--lines 3000] [--votes 4] [--rounds 3]

One service over a SQLite database holding ``--lines`` confirmed example lines for IL-0414 (six per vote,
fifty people, built from a repeating vocabulary as a large store repeats itself). ``--votes`` votes arrive
at once on a 4-thread pool, the bot's I/O pool, while a probe claims an event on the same pool every 20 ms,
as every Slack acknowledgement does (the dedupe claim). Reported per design, in the same run:

- **now**: a vote stores its lines (each screened once, when stored) and asks the background learner for
  the index; the learner rebuilds it from the stored lines, screening only lines it has not seen.
- **baseline**: what a vote did before: store, then re-screen every stored line and rebuild the index on
  the vote's own thread (the I/O pool), as ``refresh_examples`` after each vote did.

Figures: each vote's answer time (max), how long until the index holds the new lines, and the probe's ack
latency p50/p95/max. The issue's bar: every vote answered within 1 s, acks under 100 ms p95.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.app.service import IncidentService
from bot.library.case_store import load_library
from bot.ops.clock import fixed
from bot.ops.settings import BUNDLED_CASES
from bot.storage import open_storage

NOW = datetime(2027, 1, 7, 3, 0, tzinfo=UTC)
WORDS = ("nvlink fabric xid pcie hbm bank row remap parity sweep quarantine retire ecc dbe sbe page tray").split()  # noqa: SIM905 - a word list reads better as text


def _line(rng: random.Random, n: int) -> str:
    picked = " ".join(rng.sample(WORDS, 5))
    return f"gpu-doctor: {picked} failed on unit{n % 97} module{n % 13} code{n % 31}, quarantine requested"


def _service(path: Path, lines: int) -> IncidentService:
    storage = open_storage(f"sqlite:///{path}")
    storage.migrate()
    rng = random.Random(7)
    for vote in range(lines // 6):
        batch = tuple(_line(rng, vote * 6 + k) for k in range(6))
        storage.add_examples("IL-0414", batch, f"U{vote % 50}", "C1", vote + 1, NOW - timedelta(days=1))
    return IncidentService(load_library(BUNDLED_CASES), storage, now=fixed(NOW), deadline_s=20.0)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _round(service: IncidentService, votes: int, baseline: bool, round_no: int) -> dict[str, float]:
    pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="io")
    stop = threading.Event()
    acks: list[float] = []

    def probe() -> None:
        n = 0
        while not stop.is_set():
            started = time.perf_counter()
            pool.submit(service.storage.claim_event, f"probe-{round_no}-{baseline}-{n}", NOW, 600).result()
            acks.append(time.perf_counter() - started)
            n += 1
            time.sleep(0.02)

    def vote(k: int) -> float:
        started = time.perf_counter()
        line = f"gpu-doctor: vote {round_no} {k} hbm parity sweep failed on unit{k} module{round_no}, quarantine"
        service.examples.confirm("IL-0414", [line], f"V{round_no}{k}", "C1", 10_000 + k)
        if baseline:
            service.examples._screened.clear()  # the old code screened every stored line on every rebuild
            service.refresh_examples(force=True)
        else:
            service.examples_changed()
        return time.perf_counter() - started

    prober = threading.Thread(target=probe)
    prober.start()
    time.sleep(0.2)
    started = time.perf_counter()
    answered = [f.result() for f in [pool.submit(vote, k) for k in range(votes)]]
    service.learner.wait_idle(300)
    indexed = time.perf_counter() - started
    time.sleep(0.2)
    stop.set()
    prober.join()
    pool.shutdown()
    return {
        "vote_max": max(answered),
        "indexed": indexed,
        "ack_p50": statistics.median(acks),
        "ack_p95": _percentile(acks, 0.95),
        "ack_max": max(acks),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=3000)
    parser.add_argument("--votes", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        service = _service(Path(tmp) / "bench.sqlite3", args.lines)
        started = time.perf_counter()
        service.refresh_examples(force=True)
        first = time.perf_counter() - started
        print(f"{len(service.matcher.examples)} example lines indexed at start in {first:.2f} s (each screened once)")
        print(f"{'design':10} {'round':>5} {'vote max':>9} {'indexed':>8} {'ack p50':>8} {'ack p95':>8} {'ack max':>8}")
        for design in ("now", "baseline"):
            for round_no in range(args.rounds):
                got = _round(service, args.votes, design == "baseline", round_no + (100 if design == "baseline" else 0))
                print(
                    f"{design:10} {round_no + 1:>5} {got['vote_max']:>8.3f}s {got['indexed']:>7.2f}s"
                    f" {got['ack_p50'] * 1000:>6.1f}ms {got['ack_p95'] * 1000:>6.1f}ms {got['ack_max'] * 1000:>6.1f}ms"
                )
        service.storage.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
