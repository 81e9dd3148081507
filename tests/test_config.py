"""Settings fail fast, with a message naming the setting, on combinations that cannot work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import make_settings
from pydantic import ValidationError

from bot.cli import main as cli
from bot.slack.runtime import startup_problems

HTTP = {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": "secret"}


def _fails(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        make_settings(values)


def test_http_mode_needs_a_signing_secret_and_socket_mode_a_bot_token() -> None:
    _fails({"SLACK_BOT_TOKEN": "xoxb-test"}, "needs SLACK_SIGNING_SECRET")
    _fails({"SLACK_APP_TOKEN": "xapp-test"}, "also needs SLACK_BOT_TOKEN")
    assert make_settings({"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_APP_TOKEN": "xapp-test"}).socket_mode


def test_swapped_or_wrong_tokens_are_refused() -> None:
    _fails({**HTTP, "SLACK_BOT_TOKEN": "xapp-1-A1-1-abc"}, "must be a bot token")
    _fails({**HTTP, "SLACK_APP_TOKEN": "xoxb-test"}, "must be an app-level token")
    assert make_settings({**HTTP, "SLACK_BOT_TOKEN": "xoxe.xoxb-1-rotated"}).slack_enabled


def test_slack_api_url_must_be_http_and_gets_its_trailing_slash() -> None:
    assert make_settings({"SLACK_API_URL": "http://127.0.0.1:9/api"}).slack_api_url == "http://127.0.0.1:9/api/"
    _fails({"SLACK_API_URL": "slack.com/api"}, "must start with http")
    _fails({"LIBRARY_API_URL": "ftp://library.example"}, "must start with http")


def test_digest_schedule_must_parse_and_needs_a_channel() -> None:
    _fails({"DIGEST_CHANNEL": "C1", "DIGEST_CRON": "0 9 * mon"}, "DIGEST_CRON .* not a 5-field cron")
    _fails({"DIGEST_CHANNEL": "C1", "DIGEST_CRON": "61 * * * *"}, "DIGEST_CRON")
    _fails({"DIGEST_CHANNEL": "C1", "DIGEST_TIMEZONE": "Asia/Nowhere"}, "DIGEST_TIMEZONE .* IANA")
    _fails({"DIGEST_CRON": "0 8 * * fri"}, "DIGEST_CHANNEL is not")
    _fails({"DIGEST_POST_EMPTY": "true"}, "DIGEST_CHANNEL is not")
    assert make_settings({"DIGEST_CRON": "0 9 * * mon"}).digest_channel is None  # the default, as k8s sets it
    assert make_settings({"DIGEST_CHANNEL": "C0123ABC", "DIGEST_CRON": "0 8 * * fri"}).digest_cron == "0 8 * * fri"


def test_digest_channel_must_be_an_id() -> None:
    _fails({"DIGEST_CHANNEL": "#gpu-incidents"}, "channel id")
    _fails({"DIGEST_CHANNEL": "gpu-incidents"}, "channel id")


def test_sync_needs_an_api_url() -> None:
    _fails({"LIBRARY_SYNC_MINUTES": 5}, "needs LIBRARY_API_URL")


def test_startup_checks_the_case_directory(tmp_path: Path) -> None:
    assert startup_problems(make_settings({"CASES_DIR": str(tmp_path)})) == []
    (problem,) = startup_problems(make_settings({"CASES_DIR": str(tmp_path / "missing")}))
    assert "CASES_DIR" in problem and "not a directory" in problem


def test_run_fails_fast_with_the_setting_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("SLACK_APP_TOKEN", "DATABASE_URL", "CASES_DIR", "LIBRARY_API_URL", "LIBRARY_SYNC_MINUTES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {**HTTP, "DATA_DIR": str(tmp_path), "DIGEST_CHANNEL": "#incidents"}.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["run"]) == 2
    err = capsys.readouterr().err
    assert "DIGEST_CHANNEL" in err and "channel id" in err and "xoxb-test" not in err
    monkeypatch.delenv("DIGEST_CHANNEL")
    monkeypatch.setenv("CASES_DIR", str(tmp_path / "missing"))
    assert cli.main(["run"]) == 2
    assert "CASES_DIR" in capsys.readouterr().err


def test_the_configuration_page_documents_every_setting() -> None:
    from pathlib import Path

    from bot.ops.settings import Settings

    page = Path(__file__).resolve().parent.parent / "docs" / "operating" / "configuration.md"
    readme = page.read_text(encoding="utf-8")
    aliases = [str(field.validation_alias) for field in Settings.model_fields.values()]
    assert [alias for alias in aliases if f"`{alias}`" not in readme] == []
