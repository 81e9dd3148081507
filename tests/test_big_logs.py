"""Logs of any size keep their tail: the CLI reads a file's head and tail (a pipe through a bounded
buffer), a Slack file of any size is matched by its ends, line numbers stay real through the cut, and a
long line keeps its end. The output says what was skipped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import NOW, make_settings
from slack_harness import HarnessSlack, SlackHarness, harness_settings, message_event

from bot.app.service import IncidentService
from bot.library.case_store import CaseLibrary
from bot.ops.clock import fixed
from bot.storage import Storage

ROOT = Path(__file__).resolve().parent.parent
ECC = "[rank29]: RuntimeError: CUDA error: uncorrectable ECC error encountered"
CHATTER = b"2026-10-01 12:00:00 INFO step 1234 loss 2.3141 lr 0.0001 throughput 123.4 tokens/s\n"


def sparse_log(path: Path, size: int, head_lines: int = 1000) -> int:
    """A file of ``size`` bytes: training chatter, a sparse hole, then the ECC error on the last line.
    Returns the error's real line number."""
    with path.open("wb") as handle:
        handle.write(CHATTER * head_lines)
        tail = CHATTER * 200 + ECC.encode() + b"\n"
        handle.seek(size - len(tail))
        handle.write(tail)
    return head_lines + 200 + 1  # the hole holds no newline


def run_match(*args: str, stdin: Path | None = None) -> dict[str, object]:
    command = [sys.executable, "-m", "bot.cli", "match", "--json", *args]
    if stdin is None:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=120, check=True)
    else:
        with stdin.open("rb") as source:
            done = subprocess.run(command, cwd=ROOT, stdin=source, capture_output=True, timeout=120, check=True)
    record: dict[str, object] = json.loads(done.stdout.decode().splitlines()[-1])
    return record


def test_a_300_mb_log_with_the_error_on_its_last_line(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    line = sparse_log(log, 300 << 20)
    for record in (run_match(str(log)), run_match("-", stdin=log)):
        (best, *_) = record["matches"]  # type: ignore[misc]
        assert best["case_id"] in {"IL-0427", "IL-0414"} and record["truncated"] is True
        assert best["evidence"][0]["line_no"] == line
        assert record["skipped_bytes"] > 290 << 20 and record["skipped_lines"] is not None


def test_line_numbers_after_the_cut_are_real(tmp_path: Path) -> None:
    log = tmp_path / "numbered.log"
    log.write_bytes(CHATTER * 40_000 + ECC.encode() + b"\n" + CHATTER * 3)  # about 3.4 MB, over the 2 MiB cap
    record = run_match(str(log))
    (best, *_) = record["matches"]  # type: ignore[misc]
    assert best["evidence"][0]["line_no"] == 40_001
    assert isinstance(record["skipped_lines"], int) and record["skipped_lines"] > 10_000


def test_an_error_at_the_end_of_a_long_line_is_found(tmp_path: Path) -> None:
    log = tmp_path / "long.log"
    log.write_text("x" * 50_000 + " " + ECC + "\n", encoding="utf-8")
    record = run_match(str(log))
    (best, *_) = record["matches"]  # type: ignore[misc]
    assert best["case_id"] in {"IL-0427", "IL-0414"} and record["long_lines"] == 1


async def test_a_slack_file_over_the_download_cap_is_matched_by_its_ends(
    fake: HarnessSlack, storage: Storage, library: CaseLibrary
) -> None:
    fake.files["FBIG"] = CHATTER * 60_000 + ECC.encode() + b"\n"  # about 5 MB
    file = {
        "id": "FBIG",
        "name": "train.log",
        "mimetype": "text/plain",
        "filetype": "text",
        "size": len(fake.files["FBIG"]),
        "url_private_download": f"{fake.url}/files/FBIG",
    }
    service = IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0)
    settings = harness_settings(fake, MAX_FILE_BYTES=1 << 20)
    async with SlackHarness(fake, service, settings) as h:
        await h.event(message_event("", subtype="file_share", files=[file]))
        await h.settle()
        (post,) = h.posts()
        shown = json.dumps(post.body)
        assert "IL-0427" in shown or "IL-0414" in shown
        assert "line 1 from the end" in shown and "was skipped" in shown
    assert [c.headers.get("range") for c in fake.calls("/files/FBIG")] == ["bytes=0-524287", "bytes=-1572864"]


_ = make_settings
