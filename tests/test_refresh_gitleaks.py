"""``tools/refresh_gitleaks.py`` against a local gitleaks-shaped repository: it vendors a release whose
rules all compile under RE2 and whose licence is MIT, and refuses one that is not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "refresh_gitleaks.py"
VENDORED = ROOT / "bot" / "matching" / "gitleaks"


def _repo(tmp_path: Path, config: str, licence: str) -> Path:
    repo = tmp_path / "gitleaks"
    (repo / "config").mkdir(parents=True)
    (repo / "config" / "gitleaks.toml").write_text(config, encoding="utf-8")
    (repo / "LICENSE").write_text(licence, encoding="utf-8")
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    for command in (["init", "-q"], ["add", "."], [*env, "commit", "-qm", "rules"], ["tag", "v9.0.0"]):
        subprocess.run(["git", "-C", str(repo), *command], check=True, capture_output=True)
    return repo


def _run(repo: Path, into: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(repo), "--into", str(into)], capture_output=True, text=True, timeout=60
    )


def test_a_release_is_vendored_with_its_version(tmp_path: Path) -> None:
    config = (VENDORED / "gitleaks.toml").read_text(encoding="utf-8")
    repo = _repo(tmp_path, config, (VENDORED / "LICENSE").read_text(encoding="utf-8"))
    into = tmp_path / "into"
    into.mkdir()
    done = _run(repo, into)
    assert done.returncode == 0, done.stderr
    assert (into / "gitleaks.toml").read_text(encoding="utf-8") == config
    assert (into / "VERSION").read_text(encoding="utf-8").startswith("gitleaks v9.0.0 (commit ")
    assert "RULES: tuple" in (tmp_path / "gitleaks_rules.py").read_text(encoding="utf-8")


def test_a_rule_re2_cannot_run_or_another_licence_is_refused(tmp_path: Path) -> None:
    broken = _repo(tmp_path / "a", "[[rules]]\nid = \"lookbehind\"\nregex = '''(?<=x)y'''\n", "MIT License\n")
    into = tmp_path / "into"
    into.mkdir()
    refused = _run(broken, into)
    assert refused.returncode == 1 and "lookbehind" in refused.stderr
    other = _repo(tmp_path / "b", "", "GNU GENERAL PUBLIC LICENSE\n")
    assert _run(other, into).returncode == 2
    assert list(into.iterdir()) == []  # nothing written either time


def test_the_rules_module_is_the_vendored_toml() -> None:
    """``bot.matching.gitleaks_rules`` is what the script makes of the vendored TOML (nobody edited either)."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import refresh_gitleaks
    finally:
        sys.path.remove(str(SCRIPT.parent))
    config = (VENDORED / "gitleaks.toml").read_text(encoding="utf-8")
    version = (VENDORED / "VERSION").read_text(encoding="utf-8")
    generated = refresh_gitleaks.as_python(config, version)
    assert generated == (VENDORED.parent / "gitleaks_rules.py").read_text(encoding="utf-8")
