"""Rebuild ``bot/library/ordinary/negatives.txt`` from the hard-negative fixture pastes (``make ordinary``).

The lines of every fixture paste labelled with no case, deduplicated by shape (digits masked), in file
order: real errors that no case explains, which no decisive signature may hit. A ``transient-`` fixture is
left out: a negative as a whole whose lines, read alone, are proof (one NaN gradient norm that the run
recovers from), kept quiet by the matcher's transient rule, not by its signatures.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "pastes"
TARGET = ROOT / "bot" / "library" / "ordinary" / "negatives.txt"
HEADER = (
    "# Lines of the hard-negative fixture pastes (tests/fixtures/pastes, label: no case): real errors that\n"
    "# no case explains. No decisive signature may hit any line here (supporting hints may).\n"
)


def build() -> str:
    lines: list[str] = []
    seen: set[str] = set()
    for meta in sorted(FIXTURES.glob("*.json")):
        if json.loads(meta.read_text(encoding="utf-8")).get("accept") or meta.name.startswith("transient-"):
            continue
        for line in meta.with_suffix(".txt").read_text(encoding="utf-8", errors="replace").splitlines():
            text = line.strip()
            shape = re.sub(r"\d+", "0", text)
            if len(text) >= 8 and shape not in seen:
                seen.add(shape)
                lines.append(text[:600])
    return HEADER + "\n".join(lines) + "\n"


if __name__ == "__main__":
    TARGET.write_text(build(), encoding="utf-8")
    sys.exit(0)
