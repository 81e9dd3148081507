"""One clock seam: only the composition root (``bot/cli/compose.py``) reads the wall clock.

Everything else that needs the date (digest period and look-back, node memory and retention, example
retention, the noise window, dedupe TTLs, digest leases) is handed the clock the root builds, so a test
can run it at any instant. Monotonic timers (deadlines, rate windows) are not the date and are allowed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMPOSITION_ROOT = ROOT / "bot" / "cli" / "compose.py"

# Attribute reads that give the wall-clock date or time, by what the name refers to.
_CLOCK_ATTRIBUTES = {
    "datetime.datetime": {"now", "utcnow", "today", "fromtimestamp", "utcfromtimestamp"},
    "datetime.date": {"today", "fromtimestamp"},
    "time": {"time", "time_ns", "localtime", "gmtime", "ctime", "asctime", "strftime"},
}
# Names that read the clock when imported directly (``from time import time``).
_CLOCK_NAMES = {
    ("time", "time"),
    ("time", "time_ns"),
    ("time", "localtime"),
    ("time", "gmtime"),
    ("time", "ctime"),
    ("time", "asctime"),
    ("time", "strftime"),
}


def clock_reads(source: str) -> list[str]:
    """Where ``source`` reads the wall clock, as ``line: expression`` (aliases of the modules and classes
    followed; ``fromtimestamp`` with an explicit value is still listed: say why in the root if needed)."""
    tree = ast.parse(source)
    refers: dict[str, str] = {}  # local name -> "datetime.datetime" | "datetime.date" | "time" | "datetime"
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("datetime", "time"):
                    refers[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module in ("datetime", "time"):
            for alias in node.names:
                local = alias.asname or alias.name
                if node.module == "datetime" and alias.name in ("datetime", "date"):
                    refers[local] = f"datetime.{alias.name}"
                elif (node.module, alias.name) in _CLOCK_NAMES:
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = _resolve(node.value, refers)
        if owner is not None and node.attr in _CLOCK_ATTRIBUTES.get(owner, set()):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(set(found), key=lambda item: int(item.split(":", 1)[0]))


def _resolve(node: ast.expr, refers: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return refers.get(node.id)
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and refers.get(node.value.id) == "datetime"
        and node.attr in ("datetime", "date")
    ):
        return f"datetime.{node.attr}"
    return None


def product_modules() -> list[Path]:
    return sorted(path for package in ("bot", "handlers") for path in (ROOT / package).rglob("*.py"))


def test_only_the_composition_root_reads_the_wall_clock() -> None:
    offenders = {
        str(path.relative_to(ROOT)): reads
        for path in product_modules()
        if path != COMPOSITION_ROOT and (reads := clock_reads(path.read_text()))
    }
    assert offenders == {}, "read the clock the composition root builds (IncidentService.now) instead"


def test_the_composition_root_is_where_the_clock_is_read() -> None:
    # If the root stopped reading it, this test would be guarding nothing.
    assert clock_reads(COMPOSITION_ROOT.read_text())


@pytest.mark.parametrize(
    "source",
    [
        "from datetime import UTC, datetime\nx = datetime.now(UTC)",
        "import datetime\nx = datetime.datetime.utcnow()",
        "from datetime import datetime as dt\nx = dt.now()",
        "from datetime import date\nx = date.today()",
        "import time\nx = time.time()",
        "import time as t\nx = t.time_ns()",
        "from time import time\nx = time()",
        "import datetime as d\nx = d.date.today()",
        "from datetime import datetime\nclock = datetime.now",
    ],
)
def test_the_check_sees_every_way_of_reading_the_clock(source: str) -> None:
    assert clock_reads(source)


@pytest.mark.parametrize(
    "source",
    [
        "import time\nx = time.monotonic()",
        "import time\nx = time.perf_counter()",
        "from datetime import datetime\nx = datetime.fromisoformat('2027-01-07T03:00:00+00:00')",
        "from datetime import datetime\nx = datetime(2027, 1, 7)",
        "def now():\n    return 1\nx = now()",
    ],
)
def test_monotonic_timers_and_fixed_dates_are_allowed(source: str) -> None:
    assert clock_reads(source) == []
