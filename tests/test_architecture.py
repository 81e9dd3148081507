"""Dependency direction, checked by parsing imports: handlers -> service -> pure core, never back."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PURE = [
    "models",
    "normalize",
    "matcher",
    "render",
    "digest",
    "signatures",
    "textindex",
    "labels",
    "mrkdwn",
    "quality",
    "suspects",
    "interactive",
]
FORBIDDEN_IN_PURE = {
    "os",
    "pathlib",
    "socket",
    "subprocess",
    "httpx",
    "requests",
    "sqlite3",
    "psycopg",
    "slack_bolt",
    "slack_sdk",
    "aiohttp",
    "time",
    "asyncio",
    "threading",
    "bot.library.case_store",
    "bot.storage",
    "bot.app.service",
    "bot.ops.settings",
    "handlers",
    "urllib",
    "random",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def _hits(imports: set[str], banned: set[str]) -> set[str]:
    return {name for name in imports for ban in banned if name == ban or name.startswith(ban + ".")}


@pytest.mark.parametrize("module", PURE)
def test_pure_core_reads_no_files_network_clock_or_environment(module: str) -> None:
    path = ROOT / "bot" / f"{module}.py"
    if not path.exists():
        pytest.fail(f"bot/{module}.py is listed as pure core but does not exist")
    assert not _hits(_imports(path), FORBIDDEN_IN_PURE)


def test_pure_core_does_not_call_datetime_now() -> None:
    for module in PURE:
        source = (ROOT / "bot" / f"{module}.py").read_text(encoding="utf-8")
        assert ".now(" not in source and "utcnow" not in source and "getenv" not in source, module


def test_only_the_slack_edge_imports_slack_or_handlers() -> None:
    allowed = {"slack_app.py", "slack_runtime.py", "digest_runner.py", "sync.py"}
    for path in (ROOT / "bot").rglob("*.py"):
        if path.name in allowed:
            continue
        hits = _hits(_imports(path), {"slack_bolt", "handlers"})
        assert not hits, f"{path.relative_to(ROOT)} imports {hits}"


def test_handlers_do_not_reach_past_the_service() -> None:
    banned = {
        "bot.matching.matcher",
        "bot.matching.normalize",
        "bot.library.case_store",
        "bot.storage.sqlite",
        "bot.storage.postgres",
    }
    for path in (ROOT / "handlers").glob("*.py"):
        assert not _hits(_imports(path), banned), path.name


def test_core_never_imports_handlers() -> None:
    for path in (ROOT / "bot").rglob("*.py"):
        if path.name == "slack_app.py":
            continue
        assert not _hits(_imports(path), {"handlers"}), path.name
