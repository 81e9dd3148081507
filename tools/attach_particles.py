"""Attach Korean particles set apart from a Latin word, number or code in the case files (`GPU 가` to
`GPU가`), as Korean orthography does; ``cases validate`` warns on what this fixes.

    .venv/bin/python tools/attach_particles.py [cases/]     # rewrites the files, prints how many per file

Only Korean text is touched: ``ko`` sides of bilingual fields and signatures' ``note_ko``. Files are written
in the bundled format (``bot.library.merge.dump_case``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bot.library.merge import dump_case
from bot.library.review import DETACHED_PARTICLE


def attach(value: Any, key: str = "") -> tuple[Any, int]:
    """``value`` with every Korean string's detached particles attached, and how many were."""
    if isinstance(value, dict):
        total = 0
        out = {}
        for name, item in value.items():
            out[name], count = attach(item, name)
            total += count
        return out, total
    if isinstance(value, list):
        pairs = [attach(item, key) for item in value]
        return [item for item, _ in pairs], sum(count for _, count in pairs)
    if isinstance(value, str) and key in ("ko", "note_ko"):
        return DETACHED_PARTICLE.subn(r"\1", value)
    return value, 0


def main(argv: list[str]) -> int:
    directory = Path(argv[0]) if argv else Path("cases")
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        fixed, count = attach(data)
        if count:
            path.write_bytes(dump_case(fixed))
            print(f"{path.name}: {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
