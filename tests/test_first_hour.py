"""What a newcomer meets in the first hour: the command line as a subprocess, the console through its
input stream, and a signed slash command while Slack's API cannot be reached."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import NOW
from instants import Instant, a_few_instants
from slack_harness import HarnessSlack, SlackHarness, harness_settings

from bot.app.service import IncidentService
from bot.cli.console import Console
from bot.library.case_store import load_library
from bot.ops.clock import fixed
from bot.ops.settings import BUNDLED_CASES
from bot.slack.app import create_app
from bot.slack.identity import TokenRejected
from bot.slack.runtime import start_slack
from bot.storage import Storage
from bot.storage.memory import MemoryStorage

ROOT = Path(__file__).resolve().parent.parent
PASTES = ROOT / "tests" / "fixtures" / "pastes"
ECC = PASTES / "hw-ecc-deepspeed-backward.txt"
SECRETS = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DATABASE_URL", "CASES_DIR")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A clean environment for the subprocess: no tokens, data in a temporary directory."""
    clean = {k: v for k, v in os.environ.items() if k not in SECRETS}
    clean["DATA_DIR"] = str(tmp_path / "data")
    return clean


def cli(args: list[str], env: dict[str, str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


# -- 1 and 2: the case directory ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--cases", "/nonexistent", "match", "--json", str(ECC)],
        ["match", "--cases", "/nonexistent", str(ECC)],
        ["show", "IL-0427", "--cases", "/nonexistent"],
        ["cases", "validate", "/nonexistent"],
        ["--cases", "/nonexistent", "digest", "--json"],
    ],
)
def test_a_missing_case_directory_is_an_error_not_no_match(
    args: list[str], env: dict[str, str], tmp_path: Path
) -> None:
    done = cli(args, env, tmp_path)
    assert done.returncode == 2, done
    assert done.stdout == "" or "cases loaded" in done.stdout
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("incident-bot: case directory /nonexistent does not exist")


def test_cases_dir_setting_and_an_empty_directory(env: dict[str, str], tmp_path: Path) -> None:
    done = cli(["match", str(ECC)], {**env, "CASES_DIR": "/nonexistent"}, tmp_path)
    assert done.returncode == 2 and "/nonexistent does not exist" in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    done = cli(["--cases", str(empty), "show", "IL-0427"], env, tmp_path)
    assert done.returncode == 2 and "no case files" in done.stderr
    (empty / "IL-0001.json").write_text("{not json", encoding="utf-8")
    done = cli(["match", "--cases", str(empty), str(ECC)], env, tmp_path)
    assert done.returncode == 2 and "none of the 1 case files" in done.stderr and "cases validate" in done.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_cases_option_works_before_and_after_the_subcommand(where: str, env: dict[str, str], tmp_path: Path) -> None:
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(BUNDLED_CASES / "IL-0414.json", one)

    def show(case_id: str) -> list[str]:
        return ["--cases", str(one), "show", case_id] if where == "before" else ["show", case_id, "--cases", str(one)]

    done = cli(show("IL-0414"), env, tmp_path)
    assert done.returncode == 0 and "IL-0414" in done.stdout
    # Only IL-0414 is in that directory: IL-0427 must not be found there.
    assert cli(show("IL-0427"), env, tmp_path).returncode == 1
    match = ["--cases", str(one), "match", "--json", str(ECC)]
    if where == "after":
        match = ["match", "--cases", str(one), "--json", str(ECC)]
    done = cli(match, env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert {m["case_id"] for m in json.loads(done.stdout)["matches"]} == {"IL-0414"}
    # Between a command group and its command too.
    done = cli(["cases", "--cases", str(one), "validate"], env, tmp_path)
    assert done.returncode == 0 and f"1 cases loaded from {one}" in done.stdout, done.stderr


def test_validating_a_missing_directory_is_one_line(env: dict[str, str], tmp_path: Path) -> None:
    done = cli(["cases", "validate", str(tmp_path / "nowhere")], env, tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "does not exist" in done.stderr


# -- 3: the console is the slash command ----------------------------------------------------------------


def console_output(lines: list[str], storage: Storage | None = None) -> str:
    library = load_library(BUNDLED_CASES)
    out: list[str] = []
    Console(IncidentService(library, storage or MemoryStorage(), now=fixed(NOW)), write=out.append).run(
        line + "\n" for line in lines
    )
    return "\n".join(out)


def test_console_lang_command_is_the_slash_command() -> None:
    storage = MemoryStorage()
    english = console_output(["/incident IL-0427"], storage)
    assert english.index("Summary") < english.index("요약")
    korean = console_output(["/incident lang ko", "/incident IL-0427"], storage)
    after = korean.split("답변을 한국어로만 보여 줍니다", 1)[1]
    assert "요약" in after and "Summary" not in after
    both = console_output([":lang both", "/incident IL-0427"], MemoryStorage())
    assert "Usage" not in both and "answers show both languages" in both


def test_console_help_lists_console_and_slash_commands_and_is_not_a_paste() -> None:
    out = console_output([":help"])
    assert ":lang en|ko|both" in out and ":json" in out and ":quit" in out
    assert "/incident search WORDS" in out and "/incident lang en|ko|both" in out
    assert "No known case" not in out and "no known case" not in out
    assert "Unknown console command :nope" in console_output([":nope"])


# -- 5 and 6: pipes and help ----------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["show", "IL-0427"], ["match", str(ECC), str(ECC), str(ECC)]])
def test_a_closed_pipe_ends_quietly(args: list[str], env: dict[str, str], tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader (`head`) is gone before anything is written
    status = process.wait(timeout=120)
    errors = process.stderr.read().decode()
    process.stderr.close()
    assert "Traceback" not in errors and "BrokenPipeError" not in errors, errors
    assert status == 141


def test_help_is_written_for_users(env: dict[str, str], tmp_path: Path) -> None:
    top = cli(["--help"], env, tmp_path).stdout
    assert "composition root" not in top and "examples:" in top and "incident-bot show IL-0427" in top
    for command in ["show", "match", "digest", "console", "run", "sync", "stats"]:
        text = cli([command, "--help"], env, tmp_path).stdout
        assert "examples:" in text and "--cases" in text, command
    assert "cases validate" in cli(["cases", "validate", "--help"], env, tmp_path).stdout
    run_help = cli(["run", "--help"], env, tmp_path).stdout
    assert "needs SLACK_BOT_TOKEN" in run_help and "else the console" not in run_help
    assert cli(["run"], env, tmp_path).returncode == 2


# -- 7 and 8: one digest, previewed the same way everywhere ----------------------------------------------


def test_digest_json_is_always_json(env: dict[str, str], tmp_path: Path) -> None:
    done = cli(["digest", "--dry-run", "--json"], {**env, "DIGEST_LOOKBACK_DAYS": "1"}, tmp_path)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert set(plan) == {"period", "due", "case_ids", "messages"}
    assert plan["messages"] == [] or plan["case_ids"]


@pytest.mark.parametrize("instant", a_few_instants())
def test_console_and_cli_show_the_same_next_digest(env: dict[str, str], tmp_path: Path, instant: Instant) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    reviewed = (datetime.fromisoformat(instant.slot) + timedelta(minutes=1)).isoformat(timespec="seconds")
    for case_id in ("IL-0427", "IL-0414"):
        data = json.loads((BUNDLED_CASES / f"{case_id}.json").read_text(encoding="utf-8"))
        data.setdefault("review", {})["reviewed_at"] = reviewed if case_id == "IL-0427" else "2020-01-01T00:00:00Z"
        (cases / f"{case_id}.json").write_text(json.dumps(data), encoding="utf-8")
    # Reviewed after the due slot: the due digest has nothing and posts nothing, so the next one is previewed.
    env = {**env, **instant.env, "CASES_DIR": str(cases), "DIGEST_CHANNEL": "CDIGEST"}
    plan = json.loads(cli(["digest", "--json"], env, tmp_path).stdout)
    assert plan["case_ids"] == ["IL-0427"] and plan["period"]["timezone"] == instant.timezone
    start = datetime.fromisoformat(plan["period"]["start"])
    end = datetime.fromisoformat(plan["period"]["end"])
    assert start == datetime.fromisoformat(instant.slot) and end > instant.at
    window = f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M}"
    console = cli(["console"], env, tmp_path, stdin="/incident digest\n").stdout
    cli_text = cli(["digest"], env, tmp_path).stdout
    for shown in (console, cli_text):
        assert window in shown and "IL-0427" in shown and "IL-0414" not in shown.split("Digest", 1)[-1]


@pytest.mark.parametrize("instant", a_few_instants())
def test_a_case_reviewed_now_is_previewed_on_a_fresh_database(
    env: dict[str, str], tmp_path: Path, instant: Instant
) -> None:
    """No digest has run yet, so the latest slot's is due; with nothing in it, its run posts nothing, and the
    preview shows the next digest that posts: the one carrying the case reviewed a moment ago."""
    cases = tmp_path / "cases"
    cases.mkdir()
    data = json.loads((BUNDLED_CASES / "IL-0427.json").read_text(encoding="utf-8"))
    data.setdefault("review", {})["reviewed_at"] = "2020-01-01T00:00:00Z"
    (cases / "IL-0427.json").write_text(json.dumps(data), encoding="utf-8")
    env = {**env, **instant.env, "CASES_DIR": str(cases), "DIGEST_CHANNEL": "CDIGEST"}
    assert cli(["cases", "review", "IL-0427", "--by", "Jiwoo Park"], env, tmp_path).returncode == 0
    plan = json.loads(cli(["digest", "--json"], env, tmp_path).stdout)
    assert plan["case_ids"] == ["IL-0427"] and plan["due"] is False
    assert datetime.fromisoformat(plan["period"]["start"]) == datetime.fromisoformat(instant.slot)
    assert datetime.fromisoformat(plan["period"]["end"]) > instant.at


# -- 9 and 10: validate, and messages without noise ------------------------------------------------------


def test_validate_prints_every_problem_and_a_case_without_title_is_an_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    english = json.loads((BUNDLED_CASES / "IL-0414.json").read_text(encoding="utf-8"))
    english["title"] = {"en": english["title"]["en"]}
    (cases / "IL-0414.json").write_text(json.dumps(english), encoding="utf-8")
    done = cli(["cases", "validate", str(cases)], env, tmp_path)
    assert done.returncode == 0 and "warning:" in done.stdout and "title.ko: missing" in done.stdout
    untitled = json.loads((BUNDLED_CASES / "IL-0427.json").read_text(encoding="utf-8"))
    del untitled["title"]
    (cases / "IL-0427.json").write_text(json.dumps(untitled), encoding="utf-8")
    done = cli(["cases", "validate", str(cases)], env, tmp_path)
    assert done.returncode == 1 and "error:" in done.stdout and "IL-0427.json: title" in done.stdout
    (cases / "IL-0001.json").write_text('{"id": "IL-0001", "title": "a\x01b"}', encoding="utf-8")
    done = cli(["cases", "validate", str(cases)], env, tmp_path)
    [line] = [x for x in done.stdout.splitlines() if "IL-0001" in x]
    assert "invalid JSON: invalid control character at line 1, column" in line and "at at" not in line


def test_creating_the_app_with_the_token_in_the_environment_logs_no_notice(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, fake: HarnessSlack, library: Any
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-the-environment")
    from bot.app.services import Services

    with caplog.at_level(logging.DEBUG):
        create_app(harness_settings(fake), Services.around(IncidentService(library, MemoryStorage(), now=fixed(NOW))))
    assert not [r for r in caplog.records if "token" in r.getMessage() and "unused" in r.getMessage()]


# -- 11: Slack's API unreachable or the token refused ---------------------------------------------------


@pytest.mark.timing
async def test_a_slash_command_is_acked_at_once_while_slack_is_unreachable(
    fake: HarnessSlack, storage: Storage, library: Any
) -> None:
    fake.hold("auth.test")  # Slack's API does not answer
    service = IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0)
    try:
        async with SlackHarness(fake, service, harness_settings(fake), auth_wait=0.2) as h:
            started = time.monotonic()
            response, hook = await h.command("IL-0427")
            assert response.status_code == 200 and time.monotonic() - started < 1.0
            fake.release("auth.test")  # Slack is back: the background check signs in
            await h.wait_for(lambda: h.hook_calls(hook))
            assert "IL-0427" in json.dumps(h.hook_calls(hook)[0].body)
    finally:
        if fake.held("auth.test"):
            fake.release("auth.test")


async def test_a_refused_token_stops_the_start_with_one_reason(fake: HarnessSlack, library: Any) -> None:
    from bot.app.services import Services

    fake.queue("auth.test", status=200, body={"ok": False, "error": "invalid_auth"})
    services = Services.around(IncidentService(library, MemoryStorage(), now=fixed(NOW)))
    with pytest.raises(TokenRejected, match=r"Slack rejected SLACK_BOT_TOKEN \(invalid_auth\)"):
        await start_slack(harness_settings(fake), services)


def test_run_with_a_refused_token_exits_2_with_one_line(
    fake: HarnessSlack, env: dict[str, str], tmp_path: Path
) -> None:
    fake.queue("auth.test", status=200, body={"ok": False, "error": "invalid_auth"})
    env = {
        **env,
        "SLACK_BOT_TOKEN": "xoxb-refused",
        "SLACK_SIGNING_SECRET": "secret",
        "SLACK_API_URL": fake.base_url,
        "PORT": "0",
        "HOST": "127.0.0.1",
    }
    done = cli(["run"], env, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Slack rejected SLACK_BOT_TOKEN (invalid_auth)" in done.stderr
    assert "Traceback" not in done.stderr and "xoxb-refused" not in done.stderr


# -- 12: the README stands on the repository alone ------------------------------------------------------


def test_readme_cites_nothing_outside_the_repository_and_says_how_to_test() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "shared/" not in readme and "case-facts" not in readme
    # Nor do the cases and the code: what a case says stands on its own `sources`.
    for path in [*(ROOT / "cases").glob("*.json"), *(ROOT / "bot").rglob("*.py"), *(ROOT / "handlers").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        for outside in ("shared/", "case-facts", "case facts", "[V2]"):
            assert outside not in text, (path.name, outside)
    assert "TEST_DATABASE_URL=postgresql://" in readme and "package index" in readme
    assert re.search(r"console prompt in about \d+ s", readme)


def test_make_run_installs_no_development_tool() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    run_install = re.search(r"^\$\(RUN_STAMP\):.*?(?=^\S)", makefile, re.S | re.M)
    assert run_install is not None
    assert "pip install" in run_install.group(0) and "[dev]" not in run_install.group(0)
    assert re.search(r"^run: \$\(RUN_STAMP\)(  ## .*)?$", makefile, re.M)


def test_a_run_without_postgresql_says_so_at_the_end(env: dict[str, str], tmp_path: Path) -> None:
    env = {k: v for k, v in env.items() if k != "TEST_DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "tests" / "test_storage.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    lines = done.stdout.strip().splitlines()
    assert "SKIPPED" not in done.stdout and "deselected" in lines[-1]
    backends = lines[-2]
    assert "SQLite only" in backends and "PostgreSQL tests did NOT run" in backends and "TEST_DATABASE_URL=" in backends


async def test_the_language_lookup_survives_slack_being_unreachable() -> None:
    """users.info cannot connect (Slack down, a proxy refusing): the answer goes on in English, no traceback."""
    import socket

    from slack_sdk.web.async_client import AsyncWebClient

    from handlers.common import LocaleCache

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = AsyncWebClient(token="xoxb-test", base_url=f"http://127.0.0.1:{port}/api/", timeout=2)
    assert await LocaleCache().get(client, "U1") is None
