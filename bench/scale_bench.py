"""Start-up and answer times of a real-looking large library (bench/reallike.py: the bundled cases cloned
to N, sharing their vocabulary and their quoted lines), each measured in a fresh process:

- cold start: process start to the first answer with an empty ``DATA_DIR`` (load, validate, index, save
  the snapshot);
- warm start: the same with the snapshot the cold start left;
- p50 / p95 per paste size in a warm process, beside the naive baseline (rapidfuzz of the paste against
  every case's text) where it would finish within a minute;
- peak RSS of each process.

    python -m bench.scale_bench --sizes 10000,50000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.matcher_bench import pastes
from bench.reallike import write_library

BENCH_NOW = datetime(2027, 1, 7, 3, 0, tzinfo=UTC)  # the service's clock: nothing here depends on the date

FIRST = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pastes" / "hw-ecc-deepspeed-backward.txt"


def _first_answer(cases: str) -> dict[str, Any]:
    """In a child: load through the snapshot, build the service, answer one paste."""
    from bot.app.service import IncidentService
    from bot.cli.compose import load_cases, load_settings, snapshot_root
    from bot.ops.clock import fixed
    from bot.storage.memory import MemoryStorage

    settings = load_settings({"CASES_DIR": cases})
    library = load_cases(settings.cases_dir, snapshot_root(settings))
    service = IncidentService(library, MemoryStorage(), now=fixed(BENCH_NOW), deadline_s=60.0)
    result = service.match(FIRST.read_bytes(), slack_encoded=False)
    return {"best": result.best.case_id if result.best else None, "service": service}


def _child(mode: str, cases: str, repeat: int) -> None:
    started = time.perf_counter()
    first = _first_answer(cases)
    out: dict[str, Any] = {"first_answer_s": round(time.perf_counter() - started, 3), "best": first["best"]}
    if mode == "latency":
        service = first["service"]
        rows: dict[str, Any] = {}
        for name, paste in pastes().items():
            samples = []
            for _ in range(repeat if len(paste) < 1 << 20 else max(3, repeat // 10)):
                begun = time.perf_counter()
                service.match(paste, slack_encoded=False)
                samples.append((time.perf_counter() - begun) * 1000)
            samples.sort()
            rows[name] = {
                "p50_ms": round(statistics.median(samples), 2),
                "p95_ms": round(samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))], 2),
            }
        out["pastes"] = rows
        out["baseline"] = _baseline(service)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(out))


def _baseline(service: Any) -> dict[str, Any]:
    """The naive approach: rapidfuzz token_set_ratio of the paste against every case's text, estimated
    from a sample and run in full only when that takes under a minute."""
    from rapidfuzz import fuzz

    library = service.library
    sample_ids = list(library.cases)[:50]
    texts = [f"{library.cases[i].title.en}\n{library.cases[i].summary.en}" for i in sample_ids]
    out: dict[str, Any] = {}
    for name, paste in pastes().items():
        text = paste.decode("utf-8", "replace")
        begun = time.perf_counter()
        for sample in texts:
            fuzz.token_set_ratio(text, sample)
        estimate = (time.perf_counter() - begun) / len(texts) * len(library.cases)
        out[name] = {"estimate_s": round(estimate, 1)}
    return out


def _run(mode: str, cases: Path, data: Path, repeat: int) -> dict[str, Any]:
    env = {**os.environ, "DATA_DIR": str(data)}
    begun = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.scale_bench", "--child", mode, "--cases", str(cases), "--repeat", str(repeat)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_s"] = round(time.perf_counter() - begun, 3)
    return result


def run_size(size: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as work:
        cases = write_library(size, Path(work) / "cases")
        data = Path(work) / "data"
        cold = _run("first", cases, data, repeat)
        warm = _run("first", cases, data, repeat)
        latency = _run("latency", cases, data, repeat)
    return {"cases": size, "cold": cold, "warm": warm, "latency": latency}


def _table(results: list[dict[str, Any]]) -> str:
    names = list(results[0]["latency"]["pastes"])
    head = "| cases | cold start (peak RSS) | warm start (peak RSS) | " + " | ".join(
        f"{n}: p50 / p95 (naive, est.)" for n in names
    )
    lines = [head + " |", "|" + "---|" * (3 + len(names))]
    for r in results:
        cells = []
        for name in names:
            cell = r["latency"]["pastes"][name]
            naive = r["latency"]["baseline"][name]["estimate_s"]
            cells.append(f"{cell['p50_ms']:.1f} / {cell['p95_ms']:.1f} ms ({naive:.1f} s)")
        lines.append(
            f"| {r['cases']:,} | {r['cold']['process_s']:.1f} s ({r['cold']['peak_rss_mb']} MB) | "
            f"{r['warm']['process_s']:.2f} s ({r['warm']['peak_rss_mb']} MB) | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--child", choices=["first", "latency"], help=argparse.SUPPRESS)
    parser.add_argument("--cases", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.cases, args.repeat)
        return 0
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        result = run_size(size, args.repeat)
        print(json.dumps(result), flush=True)
        results.append(result)
    print(_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
