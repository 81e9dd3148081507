"""The architecture, checked by parsing imports: packages by layer, every dependency allowed by the table
below, no cycle between packages or modules, the pure packages free of I/O, small modules.

Every import counts: module level, function-local, under ``TYPE_CHECKING`` and relative.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Which package may import which (``model`` and ``ops`` at the bottom, ``cli`` on top). Anything not listed
# here is an upward import or a sideways one, and fails.
ALLOWED: dict[str, set[str]] = {
    "model": set(),
    "ops": set(),
    "matching": {"model"},
    "replies": {"model"},
    "storage": {"model"},
    "library": {"model", "matching"},
    "scheduler": {"model", "ops"},
    "digest": {"model", "ops", "replies", "storage"},
    "app": {"model", "ops", "matching", "replies", "storage", "library", "digest", "scheduler"},
    "handlers": {"model", "ops", "replies", "app"},
    "slack": {"model", "ops", "replies", "storage", "library", "digest", "app", "handlers"},
    "mcp": {"model", "ops", "replies", "storage", "library", "app"},
    "cli": {
        "model",
        "ops",
        "matching",
        "replies",
        "storage",
        "library",
        "digest",
        "app",
        "slack",
        "handlers",
        "mcp",
        "scheduler",
    },
}
# Pure: values in, values out. No files, network, clock, environment, randomness or threads.
PURE_PACKAGES = {"model", "matching", "replies"}
PURE_MODULES = {"bot.digest.content", "bot.digest.plan", "bot.app.search"}
GENERATED_DATA = {"bot.matching.gitleaks_rules"}  # tools/refresh_gitleaks.py writes it
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
    "urllib",
    "random",
    "tempfile",
    "shutil",
}
# Slack's SDKs are imported only at the Slack edge (and by the digest runner, which posts to Slack).
SLACK_EDGE = {"slack", "handlers"}
SLACK_MODULES = {"bot.digest.runner"}
MAX_LINES = 450


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in ("bot", "handlers"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _resolve_relative(module: str, node: ast.ImportFrom) -> str:
    package = module if _is_package(module) else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports_of(module: str) -> Iterator[str]:
    """Every module ``module`` imports (absolute names), at any depth of its syntax tree."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_relative(module, node) if node.level else (node.module or "")
            yield base
            for alias in node.names:  # ``from bot.x import y`` where y is a module
                if f"{base}.{alias.name}" in MODULES:
                    yield f"{base}.{alias.name}"


def _internal(name: str) -> str | None:
    """The project module ``name`` refers to (its nearest existing parent), or None for outside code."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def package_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "handlers":
        return "handlers"
    return parts[1] if len(parts) > 1 else "bot"


def _edges() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        targets = {_internal(name) for name in imports_of(module)}
        graph[module] = {t for t in targets if t and t != module and t != "bot"}
    return graph


GRAPH = _edges()


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_package_is_in_the_table() -> None:
    packages = {package_of(m) for m in MODULES} - {"bot"}
    assert packages == set(ALLOWED), "add new packages to ALLOWED (and to the README's map)"


def test_the_table_itself_has_no_cycle() -> None:
    assert _cycles(ALLOWED) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_follow_the_table(module: str) -> None:
    own = package_of(module)
    for target in GRAPH[module]:
        other = package_of(target)
        if other != own:
            assert other in ALLOWED.get(own, set()), f"{module} imports {target}: {own} may not import {other}"


def test_no_import_cycle_between_modules() -> None:
    assert _cycles(GRAPH) == []


def test_no_import_cycle_between_packages() -> None:
    packages: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        packages.setdefault(package_of(module), set()).update(package_of(t) for t in targets)
    for name, targets in packages.items():
        targets.discard(name)
    assert _cycles(packages) == []


def _pure(module: str) -> bool:
    return package_of(module) in PURE_PACKAGES or module in PURE_MODULES


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _pure(m)))
def test_pure_modules_read_no_files_network_clock_or_environment(module: str) -> None:
    names = set(imports_of(module))
    hits = {n for n in names for ban in FORBIDDEN_IN_PURE if n == ban or n.startswith(ban + ".")}
    assert not hits, f"{module} imports {hits}"
    if module in GENERATED_DATA:
        return  # string literals only (gitleaks' regexes mention ".now("): its imports are checked above
    source = MODULES[module].read_text(encoding="utf-8")
    assert ".now(" not in source and "utcnow" not in source and "getenv" not in source and "os.environ" not in source


def test_only_the_slack_edge_imports_slack_sdks() -> None:
    for module in MODULES:
        if package_of(module) in SLACK_EDGE or module in SLACK_MODULES:
            continue
        hits = {n for n in imports_of(module) if n.split(".")[0] in {"slack_bolt", "slack_sdk"}}
        assert not hits, f"{module} imports {hits}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module: str) -> None:
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines; split it by concern"


# -- the checker checks itself: each rule fails on a planted violation ----------------------------------


def test_the_checker_sees_function_local_type_checking_and_relative_imports(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from bot.app.service import IncidentService\n"
        "def f():\n    from ..cli import main\n"
        "from . import buttons\n"
    )
    path = tmp_path / "_planted_probe.py"  # read as if it were bot/replies/_planted_probe.py; nothing is
    path.write_text(source, encoding="utf-8")  # written into the source tree
    try:
        MODULES["bot.replies._planted_probe"] = path
        found = set(imports_of("bot.replies._planted_probe"))
    finally:
        MODULES.pop("bot.replies._planted_probe", None)
    assert {"bot.app.service", "bot.cli", "bot.replies.buttons"} <= found


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
