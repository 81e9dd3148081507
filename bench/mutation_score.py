"""The mutation score of ``make mutants``: reads ``mutmut results --all true`` and prints killed / total per
module and overall, with the survivors' names (``mutmut show NAME`` prints each one's diff).

Exit status 1 when the overall score is under ``--floor`` (default 90%)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter, defaultdict

KILLED = {"killed", "timeout", "segfault"}  # a mutant the tests noticed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--floor", type=float, default=90.0, help="the lowest acceptable score, in percent")
    parser.add_argument("--mutmut", default="mutmut", help="the mutmut executable")
    args = parser.parse_args(argv)
    listed = subprocess.run(
        [args.mutmut, "results", "--all", "true"], capture_output=True, text=True, check=True
    ).stdout
    by_module: dict[str, Counter[str]] = defaultdict(Counter)
    survivors: list[str] = []
    for line in listed.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if not name:
            continue
        module = ".".join(part for part in name.split(".") if not part.startswith(("x_", "x" + "ǁ")))
        by_module[module][status] += 1
        if status not in KILLED:
            survivors.append(f"{name} ({status})")
    total = Counter[str]()
    print(f"{'module':34} {'killed':>7} {'total':>6} {'score':>7}")
    for module in sorted(by_module):
        counts = by_module[module]
        total.update(counts)
        killed = sum(counts[s] for s in KILLED)
        print(f"{module:34} {killed:7d} {sum(counts.values()):6d} {100 * killed / sum(counts.values()):6.1f}%")
    killed, count = sum(total[s] for s in KILLED), sum(total.values())
    score = 100 * killed / count if count else 0.0
    print(f"{'all':34} {killed:7d} {count:6d} {score:6.1f}%")
    if survivors:
        print("\nnot killed (mutmut show NAME for the diff):")
        print("\n".join(f"  {name}" for name in survivors))
    return 0 if score >= args.floor else 1


if __name__ == "__main__":
    sys.exit(main())
