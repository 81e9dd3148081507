"""Print matcher quality on the fixture pastes (tests/fixtures/pastes): hit@1, hit@3, replies.

Run: ``make quality`` (or ``python -m bench.quality [-v]``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bot.library.case_store import load_library
from bot.matching.matcher import Matcher
from bot.matching.quality import Labelled, evaluate

ROOT = Path(__file__).resolve().parent.parent
PASTES = ROOT / "tests" / "fixtures" / "pastes"


def load_pastes(directory: Path = PASTES) -> list[Labelled]:
    pastes = []
    for meta_path in sorted(directory.glob("*.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        text = meta_path.with_suffix(".txt").read_bytes()
        pastes.append(Labelled(meta_path.stem, text, tuple(meta["accept"]), bool(meta["reply"])))
    return pastes


def main() -> int:
    library = load_library(ROOT / "cases")
    report = evaluate(Matcher(library.cases, library.signatures), load_pastes())
    verbose = "-v" in sys.argv
    for o in report.outcomes:
        ok = (o.hit1 and (o.correct_reply or not o.want_reply)) if o.positive else not o.replied
        if verbose or not ok:
            got = ", ".join(f"{c}:{s}" for c, s in zip(o.ranked[:3], o.scores[:3], strict=False))
            flag = "ok " if ok else "BAD"
            print(f"{flag} {o.name:58} accept={','.join(o.accept) or '-'} reply={o.replied} got=[{got}]")
    s = report.summary()
    print(
        f"positives {s['positives']}: hit@1 {s['hit@1']:.1%}, hit@3 {s['hit@3']:.1%}, "
        f"correct channel reply {s['correct_reply']:.1%}; "
        f"negatives {s['negatives']}: false replies {s['false_reply']:.1%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
