"""The documentation cannot drift from the code: the generated pages equal what the code gives today, every
metric and setting is documented, the README stays short, every page is in the navigation, and the shell
blocks marked safe in the README and Getting started run as written on a fresh copy of the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.ops.metrics import Metrics
from tools.gen_docs import CLI, CONFIGURATION, cli_page, configuration_page

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SAFE = re.compile(r"<!-- safe\b[^>]*-->\n```(?:sh|bash|console)\n(.*?)```", re.S)


def test_the_configuration_page_is_what_the_settings_class_gives() -> None:
    assert CONFIGURATION.read_text(encoding="utf-8") == configuration_page(), "run python tools/gen_docs.py"


def test_the_command_reference_is_what_the_cli_help_says() -> None:
    assert CLI.read_text(encoding="utf-8") == cli_page(), "run python tools/gen_docs.py"
    text = CLI.read_text(encoding="utf-8")
    for command in ("match", "cases validate", "examples delete", "db upgrade", "mcp"):
        assert f"## `incident-bot {command}`" in text, command


def test_every_setting_has_a_description() -> None:
    from bot.ops.settings import Settings

    assert [name for name, field in Settings.model_fields.items() if not field.description] == []


def test_every_metric_is_on_the_monitoring_page() -> None:
    page = (DOCS / "operating" / "monitoring.md").read_text(encoding="utf-8")
    names = []
    for family in Metrics().registry.collect():
        names.append(f"{family.name}_total" if family.type == "counter" else family.name)
    assert names and [name for name in names if f"`{name}`" not in page] == []


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    head = readme[: readme.index("## ")]
    assert head.index("make run") < head.index("make test")


def _nav_files(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [f for item in node for f in _nav_files(item)]
    if isinstance(node, dict):
        return [f for value in node.values() for f in _nav_files(value)]
    return []


def test_every_page_is_in_the_navigation_and_the_build_is_strict() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["strict"] is True
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages == set(_nav_files(config["nav"]))
    assert config["validation"]["links"]["anchors"] == "warn"  # warnings fail a strict build


def test_no_development_history_outside_the_changelog() -> None:
    phrases = re.compile(r"(?i)before this work|this round|this session|no longer gets|the old design|used to be")
    for path in [ROOT / "README.md", *DOCS.rglob("*.md")]:
        found = phrases.search(path.read_text(encoding="utf-8"))
        assert found is None, (path.name, found.group(0) if found else "")
    assert "## [Unreleased]" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def _safe_blocks() -> list[tuple[str, str]]:
    found = []
    for path in (ROOT / "README.md", DOCS / "getting-started.md", DOCS / "ko" / "getting-started.md"):
        for block in SAFE.findall(path.read_text(encoding="utf-8")):
            for line in block.splitlines():
                command = line.split("#", 1)[0].strip()
                if command:
                    found.append((path.relative_to(ROOT).as_posix(), command))
    return found


def test_the_readme_and_getting_started_mark_their_first_command_safe() -> None:
    marked = _safe_blocks()
    assert ("README.md", "make run") in marked
    assert ("docs/getting-started.md", "make run") in marked


@pytest.mark.timeout(900)
def test_the_safe_commands_run_on_a_fresh_copy(tmp_path: Path) -> None:
    """Each marked command, in a copy of the repository as Git would check it out (tracked and new files,
    no virtualenv, no data), with stdin closed: `make run` installs what running needs and opens the
    console, which ends at end of input."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    clone = tmp_path / "clone"
    for name in (n.decode() for n in listed if n):
        source = ROOT / name
        if source.is_file():
            target = clone / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DATABASE_URL", "DATA_DIR", "CASES_"))}
    env["PYTHON"] = sys.executable
    for where, command in sorted(set(_safe_blocks())):
        done = subprocess.run(
            ["sh", "-c", command],
            cwd=clone,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, (where, command, done.stdout[-2000:], done.stderr[-2000:])
        if command == "make run":
            assert "cases loaded" in done.stdout + done.stderr
