"""Every fixture and real paste's answer (top-3 ids with tiers, reply decision) as JSON lines, to compare
two versions of the matcher:

    python -m bench.answers > new.jsonl      # here; and the same in a checkout of the older version
    python -m bench.answers --diff old.jsonl new.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.quality import load_pastes, load_real
from bot.library.case_store import load_library
from bot.matching.matcher import Matcher

ROOT = Path(__file__).resolve().parent.parent


def dump() -> None:
    library = load_library(ROOT / "cases")
    matcher = Matcher(library.cases, library.signatures, sets=library.sets)
    for split, pastes in (("fixtures", load_pastes()), ("dev", load_real("dev")), ("test", load_real("test"))):
        for paste in pastes:
            result = matcher.match(paste.text, slack_encoded=False)
            top = [[m.case_id, m.tier.value] for m in result.matches[:3]]
            row = {"paste": f"{split}/{paste.name}", "top": top, "reply": result.reply_case_ids if result.reply else []}
            print(json.dumps(row))


def diff(old_path: Path, new_path: Path) -> int:
    def read(path: Path) -> dict[str, dict[str, object]]:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return {row["paste"]: row for row in rows}

    old, new = read(old_path), read(new_path)
    changed = [name for name in old if old[name] != new.get(name)]
    for name in changed:
        before, after = old[name], new.get(name, {})
        print(f"{name}\n  old {before['top']} reply={before['reply']}")
        print(f"  new {after.get('top')} reply={after.get('reply')}")
    print(f"{len(changed)} of {len(old)} answers differ")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--diff", nargs=2, type=Path)
    args = parser.parse_args()
    sys.exit(diff(*args.diff) if args.diff else dump() or 0)
