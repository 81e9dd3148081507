"""A real-looking large library: the bundled cases cloned to N files.

Each clone keeps its case's real text in both languages (title, summary, symptoms, remediation, lessons),
so many cases share most of their vocabulary and quote the same lines, as in a real library where many
cases of one failure class exist. Each clone gets its own id and fresh signatures: every original signature
followed by the clone's own tag, with examples that carry it, so they hit their own examples and pass the
case checks, and a real paste (without the tag) still gets the bundled case's answer.

    python -m bench.reallike 10000 /tmp/lib10k      # write the files
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import re2

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "cases"


def _bundled() -> list[dict[str, Any]]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(BUNDLED.glob("*.json"))]


def _options(signature: dict[str, Any]) -> Any:
    options = re2.Options()
    options.case_sensitive = not signature.get("ignore_case", False)
    return options


def clone(case: dict[str, Any], number: int) -> dict[str, Any]:
    """A copy of ``case`` with id ``SIM-<number>`` (four digits at least) and signatures of its own."""
    data = json.loads(json.dumps(case))
    data["id"] = f"SIM-{number:04d}"
    tag = f"[c{number:05d}]"
    signatures = []
    for signature in data.get("signatures", []):
        pattern = signature["pattern"]
        regex = signature.get("kind", "exact") == "regex"
        found = re2.compile(pattern if regex else re2.escape(pattern), _options(signature))
        for example in signature.get("examples", []):
            hit = found.search(example)
            if hit is None or len(hit.group(0).strip()) < 8:
                continue
            # The clone quotes the same real line; its signature is what the original matched there,
            # followed by the clone's tag (an exact string, as most library signatures are).
            literal = " ".join(hit.group(0).split())
            signatures.append(
                {
                    "kind": "exact",
                    "pattern": f"{literal} {tag}",
                    "strength": signature.get("strength", "decisive"),
                    "note": signature.get("note", ""),
                    "examples": [f"{example[: hit.end()]} {tag}{example[hit.end() :]}"],
                }
            )
            break
    data["signatures"] = signatures
    data.setdefault("review", {})["reviewed_at"] = None
    return data


def write_library(count: int, directory: Path) -> Path:
    """``count`` case files in ``directory``: the bundled cases, then clones up to ``count``."""
    directory.mkdir(parents=True, exist_ok=True)
    bundled = _bundled()
    for case in bundled:
        (directory / f"{case['id']}.json").write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")
    for number in range(1, max(0, count - len(bundled)) + 1):
        data = clone(bundled[number % len(bundled)], number)
        (directory / f"{data['id']}.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return directory


if __name__ == "__main__":
    write_library(int(sys.argv[1]), Path(sys.argv[2]))
