"""The first hour, again: deploy files that agree with each other and the code, a command line that
behaves like the tools people know, and the truth about the bundled library."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NOW, make_settings
from pydantic import ValidationError

from bot.app.routing import VERBS
from bot.app.service import IncidentService
from bot.library.case_store import load_library
from bot.library.topics import Vocabulary, near_duplicate_problems
from bot.ops.clock import fixed
from bot.ops.version import bot_version
from bot.storage.memory import MemoryStorage

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
ECC_LINE = "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
SECRETS = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DATABASE_URL", "CASES_DIR", "DATA_DIR")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No tokens, no DATA_DIR; the user's cache directory inside the test's directory."""
    clean = {k: v for k, v in os.environ.items() if k not in SECRETS}
    clean["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    clean["HOME"] = str(tmp_path / "home")
    return clean


def cli(
    args: list[str], env: dict[str, str], cwd: Path, stdin: str = "", **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**env, **extra},
        cwd=cwd,
        timeout=120,
        check=False,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one stderr line of a refused command (after argparse's usage, for a usage error), nothing on
    stdout, no traceback."""
    assert "Traceback" not in done.stderr
    *usage, line = done.stderr.strip().splitlines()
    assert not usage or usage[0].startswith("usage: "), done.stderr
    assert line.startswith("incident-bot") and done.stdout == "", done
    return line


# -- deploy files ---------------------------------------------------------------------------------------


def _env_example() -> dict[str, str]:
    """The settings ``deploy/.env.example`` sets (uncommented lines)."""
    lines = (DEPLOY / ".env.example").read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines if line.strip() and not line.startswith("#"))


def test_the_env_example_fills_what_the_manifest_mode_needs() -> None:
    manifest = (DEPLOY / "slack-manifest.yaml").read_text(encoding="utf-8")
    socket_mode = re.search(r"^\s*socket_mode_enabled:\s*(true|false)", manifest, re.MULTILINE)
    assert socket_mode is not None
    filled = _env_example()
    if socket_mode.group(1) == "true":
        assert {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"} <= set(filled), filled
    else:
        assert {"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"} <= set(filled) and "SLACK_APP_TOKEN" not in filled


def test_deploy_comments_say_what_the_code_does() -> None:
    example = (DEPLOY / ".env.example").read_text(encoding="utf-8")
    service = (DEPLOY / "incident-bot.service").read_text(encoding="utf-8")
    for text in (example, service):
        assert "falls back to" not in text and "starts the local console" not in text
    assert "empty value is NOT the same as unset" not in example
    assert "empty value is the same as unset" in example.lower().replace("an empty", "empty")
    assert "exits with status 2" in example and "exits with status 2" in service


@pytest.mark.parametrize("placeholder", ["xoxb-REPLACE-ME", "REPLACE-ME", "<your signing secret>", "change-me"])
def test_a_placeholder_is_refused_by_name_never_by_value(placeholder: str) -> None:
    token = placeholder if placeholder.startswith("xoxb-") else "xoxb-" + placeholder
    with pytest.raises(ValidationError) as refused:
        make_settings({"SLACK_BOT_TOKEN": token, "SLACK_SIGNING_SECRET": "s3cret"})
    said = str(refused.value.errors(include_input=False)[0]["msg"])
    assert "SLACK_BOT_TOKEN" in said and placeholder not in said


def test_the_env_example_as_shipped_is_refused_with_one_line(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / ".env").write_text((DEPLOY / ".env.example").read_text(encoding="utf-8"), encoding="utf-8")
    line = one_line(cli(["show", "IL-0427"], env, tmp_path))
    assert "SLACK_APP_TOKEN, SLACK_BOT_TOKEN hold a placeholder" in line
    assert "REPLACE" not in line and "xoxb" not in line


def test_an_empty_value_is_unset(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SLACK_BOT_TOKEN=\nSLACK_APP_TOKEN=\n", encoding="utf-8")
    done = cli(["run"], env, tmp_path, SLACK_SIGNING_SECRET="")
    assert done.returncode == 2 and "SLACK_BOT_TOKEN is not set" in one_line(done)  # unset, not invalid


def test_the_manifest_usage_hint_names_every_subcommand() -> None:
    manifest = (DEPLOY / "slack-manifest.yaml").read_text(encoding="utf-8")
    [hint] = re.findall(r'usage_hint: "([^"]*)"', manifest)
    named = {part.split()[0] for part in hint.split(" | ") if part and not part.startswith("<")}
    assert VERBS | {"help"} <= named, VERBS - named


# -- a command line like the tools people know -------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "status", "said"),
    [
        (["show", "IL-9999"], 1, "no case 'IL-9999' in the library"),
        (["cases", "review", "IL-9999", "--by", "Jiwoo"], 1, "no case 'IL-9999'"),
        (["cases", "draft", "export", "99"], 1, "no draft 99"),
        (["cases", "draft", "export", "abc"], 2, "is not a draft id"),
        (["examples", "list", "--case", "IL-9999"], 1, "no case 'IL-9999'"),
        (["stats", "--top", "-1"], 2, "must be from 1 to 1000"),
        (["search", "ecc", "component:no-such-part"], 2, "no topic"),
        (["match", "-"], 2, "standard input is empty"),
    ],
)
def test_refusals_are_one_line_on_stderr_with_the_right_status(
    args: list[str], status: int, said: str, env: dict[str, str], tmp_path: Path
) -> None:
    done = cli(args, env, tmp_path, stdin="  \n", DATA_DIR=str(tmp_path / "data"))
    assert done.returncode == status, done
    assert said in one_line(done)


def test_a_case_directory_that_is_a_file_or_empty(env: dict[str, str], tmp_path: Path) -> None:
    afile, empty = tmp_path / "cases.json", tmp_path / "empty"
    afile.write_text("{}", encoding="utf-8")
    empty.mkdir()
    done = cli(["show", "IL-0427"], env, tmp_path, CASES_DIR=str(afile))
    assert done.returncode == 2 and "is a file, not a directory" in one_line(done)
    done = cli(["cases", "validate", str(empty)], env, tmp_path)
    assert done.returncode == 2 and "no case files" in one_line(done)


def test_close_ids_only_when_they_are_close() -> None:
    service = IncidentService(load_library(ROOT / "cases"), MemoryStorage(), now=fixed(NOW))
    assert "IL-0427" in [c.id for c in service.suggest_ids("IL-0428")]  # one typo away
    assert service.suggest_ids("IL-0409") == [] and service.suggest_ids("IL-9999") == []
    assert "Closest" not in service.lookup("IL-0409", ("en",)).plain


def test_version_help_and_the_usage_line(env: dict[str, str], tmp_path: Path) -> None:
    done = cli(["--version"], env, tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"incident-bot {bot_version()}"
    done = cli(["cases", "review", "IL-0427"], env, tmp_path)
    assert done.returncode == 2 and "--by NAME" in done.stderr and "[--by" not in done.stderr
    made = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=30)
    for target in ("run", "test", "stress", "mutants", "quality", "help"):
        assert re.search(rf"^  {target}\s+\S", made.stdout, re.MULTILINE), made.stdout


def test_search_and_cases_list_give_what_slack_gives(env: dict[str, str], tmp_path: Path) -> None:
    service = IncidentService(load_library(ROOT / "cases"), MemoryStorage(), now=fixed(NOW))
    for words in ("nccl timeout", "ecc component:gpu-memory", "공유 메모리"):
        done = cli(["search", *words.split(), "--json"], env, tmp_path)
        assert done.returncode == 0, done.stderr
        found = [c["id"] for c in json.loads(done.stdout)]
        slack = service.command(f"search {words}").plain
        assert found and found == re.findall(r"^\s*((?:IL|PUB)-\d{4})\b", slack, re.MULTILINE)
    text = cli(["search", "xid", "79"], env, tmp_path).stdout
    assert service.search("xid 79").found[0].id in text.splitlines()[0]
    done = cli(["search", "zzzzqqq"], env, tmp_path)
    assert done.returncode == 1 and "No case matches" in done.stdout
    listed = json.loads(cli(["cases", "list", "--json"], env, tmp_path).stdout)
    assert [c["id"] for c in listed] == [c.id for c in service.recent_cases(limit=1000)]
    assert len(listed) == len(service.library)
    shown = re.findall(r"^\s*((?:IL|PUB)-\d{4})\b", service.command("").plain, re.MULTILINE)
    assert shown and shown == [c["id"] for c in listed][: len(shown)]


@pytest.mark.parametrize(
    "args",
    [["match", "-"], ["show", "IL-0427"], ["search", "ecc"], ["cases", "list"], ["topics"]],
)
def test_commands_that_only_read_never_create_data_here(args: list[str], env: dict[str, str], tmp_path: Path) -> None:
    done = cli(args, env, tmp_path, stdin=ECC_LINE)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "data").exists()
    assert list((tmp_path / "cache" / "incident-bot" / "snapshots").iterdir())  # the snapshot went here
    done = cli(args, env, tmp_path, stdin=ECC_LINE, DATA_DIR=str(tmp_path / "mine"))
    assert done.returncode == 0 and list((tmp_path / "mine" / "snapshots").iterdir())


def test_match_json_evidence_is_in_words(env: dict[str, str], tmp_path: Path) -> None:
    done = cli(["match", "--json", "-"], env, tmp_path, stdin=ECC_LINE)
    record = json.loads(done.stdout)
    evidence = [e for m in record["matches"] for e in m["evidence"]]
    assert evidence and all("matched" not in e and e["why"] for e in evidence)


# -- topics --------------------------------------------------------------------------------------------------


def test_near_duplicate_topics_are_merged_and_new_ones_warned(tmp_path: Path) -> None:
    library = load_library(ROOT / "cases")
    vocabulary = Vocabulary.of(library.summaries.values())
    names = {t.name for t in vocabulary.by_kind("component")} | {t.name for t in vocabulary.by_kind("symptom")}
    assert "container-images" not in names and "data-loading-stalled" not in names
    assert near_duplicate_problems(vocabulary) == []
    source = json.loads((ROOT / "cases" / "IL-0427.json").read_text(encoding="utf-8"))
    source["components"] = [*source.get("components", []), "checkpoint-writers"]
    twin = dict(source, id="IL-0999", components=["checkpoint-writer"])
    (tmp_path / "IL-0427.json").write_text(json.dumps(source), encoding="utf-8")
    (tmp_path / "IL-0999.json").write_text(json.dumps(twin), encoding="utf-8")
    seeded = load_library(tmp_path)
    [warning] = near_duplicate_problems(Vocabulary.of(seeded.summaries.values()))
    assert warning.severity == "warning" and "checkpoint-writer" in warning.message
    assert "checkpoint-writers" in warning.message


# -- the truth about the bundled library -----------------------------------------------------------------------


def test_the_readme_says_the_bundled_cases_are_not_reviewed_yet() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    intro = readme.split("## ", 1)[0]
    assert "none is reviewed by your team yet" in intro and "cases review ID --by NAME" in intro
    assert "It brings a\nreviewed" not in intro
    cases = [json.loads(p.read_text(encoding="utf-8")) for p in (ROOT / "cases").glob("*.json")]
    assert all(case["review"]["reviewed_at"] is None for case in cases)  # what the README says is true


def test_an_empty_digest_explains_how_a_case_becomes_reviewed(env: dict[str, str], tmp_path: Path) -> None:
    service = IncidentService(load_library(ROOT / "cases"), MemoryStorage(), now=fixed(NOW))
    preview = service.command("digest").plain
    assert "cases review ID --by NAME" in preview and "/incident review ID" in preview
    done = cli(["digest"], env, tmp_path, DATA_DIR=str(tmp_path / "data"))
    assert "cases review ID --by NAME" in done.stdout
