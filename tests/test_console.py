"""The console as people use it: a paste is one answer, a terminal gets a prompt, :json is what Slack gets,
reviews and drafts work for the console user, and a saved language shows that language only."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import NOW

from bot.app.service import IncidentService
from bot.cli.console import EMPTY_LINE, PASTE_PROMPT, PROMPT, Console
from bot.library.case_store import load_library
from bot.ops.clock import fixed
from bot.storage.memory import MemoryStorage

ROOT = Path(__file__).resolve().parent.parent
CHAINED = """\
Traceback (most recent call last):
  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1133, in _try_get_data
    data = self._data_queue.get(timeout=timeout)
RuntimeError: DataLoader worker (pid 32848) is killed by signal: Bus error. It is possible that dataloader's \
workers are out of shared memory. Please try to raise your shared memory limit.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/workspace/train.py", line 240, in <module>
    batch = next(loader)
RuntimeError: DataLoader worker (pid(s) 32848) exited unexpectedly"""


def _service() -> IncidentService:
    return IncidentService(load_library(ROOT / "cases"), MemoryStorage(), now=fixed(NOW))


class Transcript:
    """What the console wrote, one entry per ``write``; answers end with an empty entry."""

    def __init__(self) -> None:
        self.out: list[str] = []

    def __call__(self, text: str) -> None:
        self.out.append(text)

    @property
    def answers(self) -> list[str]:
        found, current = [], []
        for entry in self.out:
            if entry == "":
                found.append("\n".join(current))
                current = []
            else:
                current.append(entry)
        return found

    @property
    def text(self) -> str:
        return "\n".join(self.out)


def _run(lines: list[str], service: IncidentService | None = None, *, interactive: bool = False) -> Transcript:
    seen = Transcript()
    Console(service or _service(), seen, interactive=interactive).run(line + "\n" for line in lines)
    return seen


def test_a_chained_traceback_is_one_paste_and_one_answer_the_same_as_match() -> None:
    service = _service()
    expected = service.match(CHAINED, slack_encoded=False)
    assert expected.best is not None
    for ending in ([".", ":quit"], []):  # the end marker, or the end of piped input
        seen = _run([*CHAINED.splitlines(), *ending], service)
        [answer] = seen.answers
        assert expected.best.case_id in answer and "No known case" not in answer


def test_lines_after_the_end_marker_are_commands_again() -> None:
    seen = _run([*CHAINED.splitlines(), ".", "/incident IL-0427", "KeyError: 'input_ids'", "."])
    _, lookup, unrelated = seen.answers
    assert "IL-0427" in lookup and "Summary" in lookup
    assert "No known case fits this paste." in unrelated


def test_a_huge_paste_is_kept_by_head_and_tail() -> None:
    seen = Transcript()
    console = Console(_service(), seen, paste_limit=4096)
    noise = [f"step {i} loss 2.{i % 97:02d}" for i in range(20_000)]
    console.run([*noise, CHAINED.splitlines()[3], "."])
    [answer] = seen.answers
    assert "Bus error" in answer  # the tail (where the error is) survives the cap
    assert sum(len(line) for line in console._paste.head) == 0  # nothing kept between pastes


def test_a_terminal_gets_a_prompt_and_a_hint_on_an_empty_line() -> None:
    seen = Transcript()
    console = Console(_service(), seen, interactive=True)
    assert console.prompt == PROMPT
    console.feed("")
    assert seen.out == [EMPTY_LINE]
    console.feed("RuntimeError: CUDA error: an illegal memory access was encountered")
    assert console.prompt == PASTE_PROMPT
    console.feed("")  # inside a paste an empty line belongs to it: no hint, no answer yet
    assert seen.out == [EMPTY_LINE]
    console.feed(".")
    assert console.prompt == PROMPT and len(seen.answers) == 1
    assert _run(["", "  "]).out == []  # piped input: blank lines are not worth a hint


@pytest.mark.timing
def test_the_console_prompts_in_a_real_terminal(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    env = {**os.environ, "CASES_DIR": str(ROOT / "cases"), "DATA_DIR": str(tmp_path), "NO_COLOR": "1"}
    env.pop("SLACK_BOT_TOKEN", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "console"], stdin=follower, stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    seen = b""

    def until(marker: bytes, deadline_s: float = 60.0) -> None:
        nonlocal seen
        deadline = time.monotonic() + deadline_s
        while marker not in seen:
            assert time.monotonic() < deadline, f"no {marker!r} in {seen[-400:]!r}"
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                seen += os.read(leader, 65536)

    try:
        until(PROMPT.encode())
        os.write(leader, b"RuntimeError: CUDA error: uncorrectable ECC error encountered\n")
        until(PASTE_PROMPT.encode())
        os.write(leader, b".\n")
        until(b"IL-0427")
        os.write(leader, b":quit\n")
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        os.close(leader)


def test_json_shows_the_message_slack_gets_with_its_buttons() -> None:
    seen = _run([":json", "RuntimeError: CUDA error: uncorrectable ECC error encountered", "."])
    [shown] = [entry for entry in seen.out if entry.startswith("{\n")]
    payload = json.loads(shown)
    assert set(payload) == {"channel", "text", "blocks", "unfurl_links", "unfurl_media"}
    actions = [element for block in payload["blocks"] if block["type"] == "actions" for element in block["elements"]]
    ids = {element["action_id"] for element in actions}
    assert {"feedback_helpful", "feedback_not_this_case", "switch_language"} <= ids, ids
    assert all("~" in element["value"] for element in actions)  # sealed, as Slack receives them


def test_review_works_for_the_console_user() -> None:
    service = _service()
    for line in ("/incident review IL-0427 checked against the thread", ":review IL-0415"):
        seen = _run([line], service)
        assert "not allowed" not in seen.text.lower() and "review" in seen.text.lower()
    assert {"IL-0427", "IL-0415"} <= set(service.latest_reviews())
    assert service.latest_reviews()["IL-0427"].reviewer == "console"


def test_draft_on_a_paste_without_a_usable_line_says_so_and_saves_nothing() -> None:
    service = _service()
    seen = _run(["hello there, all good today", ".", ":draft nothing | nothing"], service)
    assert "No draft can be proposed" in seen.text
    assert service.storage.list_drafts() == []


def test_a_saved_language_shows_that_language_only_and_both_shows_both() -> None:
    service = _service()
    korean = _run(["/incident lang ko", "/incident IL-0427"], service).answers
    assert "한국어로만" in korean[0] and "ko first" not in korean[0]
    assert "요약" in korean[1] and "Summary" not in korean[1]
    english = _run([":lang en", "/incident IL-0427"], service).answers
    assert "English only" in english[0]
    assert "Summary" in english[1] and "요약" not in english[1]
    both = _run([":lang both", "/incident IL-0427"], service).answers
    assert "both languages" in both[0]
    assert both[1].index("Summary") < both[1].index("요약")  # no Slack locale in the console: English first


def test_a_first_line_longer_than_half_the_limit_is_still_a_paste() -> None:
    seen = Transcript()
    console = Console(_service(), seen, paste_limit=64)
    console.run(["RuntimeError: CUDA error: uncorrectable ECC error encountered " + "x" * 40, "."])
    [answer] = seen.answers
    assert "IL-0427" in answer or "IL-0414" in answer
