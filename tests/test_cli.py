"""The command line end to end: show, match (JSON Lines), cases validate, digest, console."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fake_slack import FakeSlack
from instants import WEEKLY, Instant, every_instant

from bot.cli.console import Console
from bot.cli.main import build_service, main

ROOT = Path(__file__).resolve().parent.parent
PASTES = ROOT / "tests" / "fixtures" / "pastes"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DATABASE_URL", "CASES_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no developer .env is read


def test_show_prints_both_languages(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--cases", str(ROOT / "cases"), "show", "il-427"]) == 0
    out = capsys.readouterr().out
    assert "IL-0427" in out and "What was done then" in out and "조치" in out and "교훈" in out


def test_show_unknown_id_suggests_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--cases", str(ROOT / "cases"), "show", "IL-0428"]) == 1
    said = capsys.readouterr()
    assert said.out == "" and "no case 'IL-0428'" in said.err and "IL-0427" in said.err


def test_match_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(PASTES / "hw-ecc-deepspeed-backward.txt"), str(PASTES / "neg-hw-shape-mismatch-linear.txt")]
    assert main(["--cases", str(ROOT / "cases"), "match", "--json", *files]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["file"] for line in lines] == files
    first, second = lines
    assert first["reply"] is True
    assert first["matches"][0]["case_id"] in {"IL-0427", "IL-0414"}
    assert first["matches"][0]["tier"] == "exact"
    assert first["matches"][0]["evidence"][0]["line"]
    assert {"score", "evidence", "case_id", "tier"} <= set(first["matches"][0])
    assert second["reply"] is False
    assert isinstance(first["elapsed_ms"], float)


def test_match_reads_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    fake = io.TextIOWrapper(io.BytesIO(b"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"))
    monkeypatch.setattr(sys, "stdin", fake)
    assert main(["--cases", str(ROOT / "cases"), "match", "--json", "-"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["matches"][0]["case_id"] == "IL-0415"


def test_match_unreadable_file_is_nonzero(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--cases", str(ROOT / "cases"), "match", str(tmp_path / "missing.log")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_console_session() -> None:
    service = build_service(_settings({"CASES_DIR": str(ROOT / "cases")}))
    out: list[str] = []
    console = Console(service, out.append)
    console.run(
        [
            "/incident IL-0427\n",
            "/incident il-9999\n",
            ":json\n",
            "[default3]:RuntimeError: CUDA error: uncorrectable ECC error encountered\n",
            ".\n",
            "KeyError: 'input_ids'\n",
            ".\n",
            ":quit\n",
            "/incident help\n",
        ]
    )
    text = "\n".join(out)
    assert "교훈" in text and "Lessons" in text
    assert "No case 'il-9999'" in text
    assert '"blocks"' in text  # :json printed the Block Kit
    assert "exact match" in text
    assert "No known case fits this paste." in text
    assert "/incident search WORDS" not in text  # :quit stopped before help


def _settings(values: dict[str, Any]) -> Any:
    from conftest import make_settings

    return make_settings(values)


def _reviewed_case_dir(tmp_path: Path, reviewed_at: datetime) -> Path:
    cases = tmp_path / "cases"
    cases.mkdir()
    source = json.loads((ROOT / "cases" / "IL-0427.json").read_text(encoding="utf-8"))
    source["review"] = {"written_by": "test", "reviewed_at": reviewed_at.isoformat()}
    (cases / "IL-0427.json").write_text(json.dumps(source), encoding="utf-8")
    return cases


@pytest.mark.parametrize("instant", every_instant())
def test_digest_dry_run_then_post_exactly_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], instant: Instant
) -> None:
    """At each instant, a case reviewed an hour before the slot due then is previewed, posted once, and not
    posted again."""
    cases = _reviewed_case_dir(tmp_path, datetime.fromisoformat(instant.slot) - timedelta(hours=1))
    for name, value in instant.env.items():
        monkeypatch.setenv(name, value)
    if instant.cron != WEEKLY:
        monkeypatch.setenv("DIGEST_CHANNEL", "CDIGEST")  # a schedule of its own needs a channel to post to
    assert main(["--cases", str(cases), "digest", "--dry-run"]) == 0
    assert "IL-0427" in capsys.readouterr().out
    assert main(["--cases", str(cases), "digest", "--post"]) == 2  # no token (and maybe no channel)
    assert main(["--cases", str(cases), "digest", "--post", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["status"] == "refused"
    with FakeSlack() as slack:
        # Posting serves no request: a bot token without a signing secret (or an app token) is enough.
        monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
        monkeypatch.setenv("SLACK_API_URL", slack.base_url)
        monkeypatch.setenv("DIGEST_CHANNEL", "CDIGEST")
        assert main(["--cases", str(cases), "digest", "--post", "--json"]) == 0
        first = json.loads(capsys.readouterr().out)
        assert first["status"] == "posted" and len(first["message_ts"]) == 1
        assert first["period"] == instant.slot
        assert main(["--cases", str(cases), "digest", "--post"]) == 0
        assert "done" in capsys.readouterr().out
        posted = slack.posted("CDIGEST")
        assert len(posted) == 1
        assert "IL-0427" in json.dumps(posted[0])


def test_invalid_settings_fail_fast(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")  # HTTP mode without a signing secret
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert "SLACK_SIGNING_SECRET" in err
    assert "xoxb-test" not in err
    monkeypatch.setenv("DATABASE_URL", "mysql://u:hunter2@db/x")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    assert main(["stats"]) == 2
    err = capsys.readouterr().err
    assert err == "incident-bot: invalid settings: DATABASE_URL must start with sqlite:/// or postgresql://\n"
