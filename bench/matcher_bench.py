"""Matcher benchmark: synthetic libraries of 100 to 50,000 cases, pastes of 20 lines to 10 MB.

For each library size, in a fresh subprocess (so peak RSS belongs to that size alone), it reports index
build time, p50/p95 match latency per paste size and peak RSS, next to a naive baseline run in the same
process: rapidfuzz scoring the whole paste against every case's full text. Baseline cells whose
estimated time passes 60 s are marked "not run".

Run: ``make bench`` or ``python -m bench.matcher_bench [--sizes 100,1000] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from bot.library.case_store import load_library
from bot.matching.matcher import Matcher
from bot.matching.ranking import MatchConfig
from bot.matching.signatures import compile_signature
from bot.model.case import Case

ROOT = Path(__file__).resolve().parent.parent
PASTES = ROOT / "tests" / "fixtures" / "pastes"
BASELINE_BUDGET_S = 60.0
_WORD_TEXT = (
    "gpu node rank nccl cuda driver kernel memory link fabric timeout allreduce barrier checkpoint loader "
    "worker shard tensor stream queue socket store agent launcher scheduler partition volume quota inode "
    "switch port cable firmware thermal power clock daemon container pod volume mount cache index"
)
_WORDS = _WORD_TEXT.split()


def synthetic_cases(count: int, seed: int = 7) -> list[Case]:
    """The bundled cases plus synthetic ones, each with exact and regex signatures and case text."""
    rng = random.Random(seed)
    library = load_library(ROOT / "cases")
    cases = list(library.cases.values())
    for number in range(max(0, count - len(cases))):
        words = rng.sample(_WORDS, 6)
        code = f"E{number:05d}"
        component = f"{words[0].capitalize()}{words[1].capitalize()}Manager"
        error = f"{component}Error: {words[2]} {words[3]} failed with status {code} on {words[4]}"
        cases.append(
            Case.model_validate(
                {
                    "id": f"SYN-{number + 1:05d}",
                    "title": {"en": f"{words[2]} {words[3]} failure in {component}", "ko": f"{component} 장애"},
                    "summary": {"en": " ".join(rng.choices(_WORDS, k=80)), "ko": "합성 사례"},
                    "symptoms_text": {"en": f'The job logged "{error}" and then "{words[5]} {code} aborted".'},
                    "components": words[:3],
                    "failure_class": f"synthetic-{number % 40}",
                    "signatures": [
                        {"pattern": f"{component}Error: {words[2]} {words[3]}", "strength": "decisive"},
                        {"pattern": f"status {code}", "strength": "supporting"},
                        {"kind": "regex", "pattern": rf"{words[5]} {code} abort(ed|ing)", "strength": "supporting"},
                        {
                            "kind": "regex",
                            "pattern": rf"{component}: [a-z]{{1,20}} {words[4]} lost after \d{{1,6}} ms",
                            "strength": "decisive",
                        },
                    ],
                }
            )
        )
    return cases[:count] if count < len(cases) else cases


def pastes() -> dict[str, bytes]:
    """20 lines, 200 lines, 2,000 lines and 10 MB, built from the fixture pastes."""
    ecc = (PASTES / "hw-ecc-deepspeed-backward.txt").read_text(encoding="utf-8").splitlines()
    watchdog = (PASTES / "hw-nccl-watchdog-256-ranks-one-node-behind.txt").read_text(encoding="utf-8").splitlines()
    mixed = ecc + watchdog
    training = [
        f"[default{r % 8}]: iteration {i} | lm loss: 2.{i % 97:02d} | grad norm: 0.{i % 89}"
        for r, i in zip(range(100_000), range(100_000), strict=True)
    ]
    twenty = (ecc * 20)[:20]
    two_hundred = (training[:180] + ecc)[:200]
    two_thousand = (training[:1800] + mixed)[:2000]
    big: list[str] = []
    size = 0
    index = 0
    while size < 10 * 1024 * 1024:
        line = training[index % len(training)]
        big.append(line)
        size += len(line) + 1
        index += 1
    big.extend(ecc)
    return {
        "20 lines": "\n".join(twenty).encode(),
        "200 lines": "\n".join(two_hundred).encode(),
        "2,000 lines": "\n".join(two_thousand).encode(),
        "10 MB": "\n".join(big).encode(),
    }


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return p50, p95


def _case_text(case: Case) -> str:
    return "\n".join(
        [case.title.en or "", case.summary.en or "", case.symptoms_text.en or ""] + [s.pattern for s in case.signatures]
    )


def _rss_mb() -> float:
    """Current resident set size of this process (Linux)."""
    with open("/proc/self/statm", encoding="ascii") as handle:
        pages = int(handle.read().split()[1])
    return pages * resource.getpagesize() / (1024 * 1024)


def run_size(size: int, repeat: int) -> dict[str, Any]:
    cases = synthetic_cases(size)
    before = _rss_mb()
    started = time.perf_counter()
    signatures = [compile_signature(c.id, i, s) for c in cases for i, s in enumerate(c.signatures)]
    check_s = time.perf_counter() - started  # what the case store does at load time
    started = time.perf_counter()
    matcher = Matcher({c.id: c for c in cases}, signatures, MatchConfig(max_bytes=2 << 20))
    build_s = time.perf_counter() - started
    index_mb = _rss_mb() - before
    all_pastes = pastes()
    rows: dict[str, Any] = {}
    for name, paste in all_pastes.items():
        samples = []
        for _ in range(repeat if len(paste) < 1 << 20 else max(3, repeat // 10)):
            started = time.perf_counter()
            matcher.match(paste, slack_encoded=False)
            samples.append((time.perf_counter() - started) * 1000)
        p50, p95 = _percentiles(samples)
        rows[name] = {"p50_ms": round(p50, 2), "p95_ms": round(p95, 2)}
    # Peak RSS of the bot's own work (library, index, every paste matched), before the baseline's data.
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    texts = [_case_text(c) for c in cases]
    for name, paste in all_pastes.items():
        # Baseline: the naive approach, estimated from one comparison before running it in full.
        text = paste.decode("utf-8", "replace")
        started = time.perf_counter()
        fuzz.token_set_ratio(text, texts[0])
        estimate = (time.perf_counter() - started) * len(texts)
        baseline: dict[str, Any] = {"run": False, "estimate_s": round(estimate, 1)}
        if estimate <= BASELINE_BUDGET_S:
            base_samples = []
            for _ in range(3 if estimate > 1 else 10):
                started = time.perf_counter()
                max(texts, key=lambda t: fuzz.token_set_ratio(text, t))
                base_samples.append((time.perf_counter() - started) * 1000)
            b50, b95 = _percentiles(base_samples)
            baseline = {"run": True, "p50_ms": round(b50, 2), "p95_ms": round(b95, 2)}
        rows[name]["baseline"] = baseline
    return {
        "cases": size,
        "signatures": len(signatures),
        "check_s": round(check_s, 3),
        "build_s": round(build_s, 3),
        "index_mb": round(index_mb),
        "peak_rss_mb": round(peak_mb),
        "pastes": rows,
    }


def _table(results: list[dict[str, Any]]) -> str:
    names = list(results[0]["pastes"])
    head = (
        "| cases | check signatures | build index | index RSS | peak RSS | "
        + " | ".join(f"{n}: p50 / p95 (baseline p50, ratio)" for n in names)
        + " |"
    )
    lines = [head, "|" + "---|" * (5 + len(names))]
    for r in results:
        cells = []
        for n in names:
            cell = r["pastes"][n]
            base = cell["baseline"]
            if base["run"]:
                ratio = base["p50_ms"] / cell["p50_ms"] if cell["p50_ms"] else float("inf")
                extra = f"{base['p50_ms']:.0f} ms, {ratio:.0f}x"
            else:
                extra = f"not run, ~{base['estimate_s']:.0f} s est."
            cells.append(f"{cell['p50_ms']:.1f} / {cell['p95_ms']:.1f} ms ({extra})")
        lines.append(
            f"| {r['cases']:,} | {r['check_s']:.2f} s | {r['build_s']:.2f} s | {r['index_mb']} MB | "
            f"{r['peak_rss_mb']} MB | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1000,10000,50000")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_size(args.one, args.repeat)))
        return 0
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        out = subprocess.run(
            [sys.executable, "-m", "bench.matcher_bench", "--one", str(size), "--repeat", str(args.repeat)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(result)
        print(
            f"{size:>6} cases: check {result['check_s']} s, build {result['build_s']} s, "
            f"peak {result['peak_rss_mb']} MB",
            file=sys.stderr,
        )
    print(_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
