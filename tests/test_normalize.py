"""Cleaning pastes: Slack markup, prefixes, caps, binary input; one output line per pasted line."""

from __future__ import annotations

import time

import pytest

from bot.matching.normalize import MAX_LINE_CHARS, clean, excerpt, unescape_slack


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "[default3]:terminate called after throwing an instance of 'c10::CUDAError'",
            "terminate called after throwing an instance of 'c10::CUDAError'",
        ),
        (
            "[rank3]:[E1120 14:02:11.123456789 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught",
            "[E1120 14:02:11.123456789 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught",
        ),
        ("0: [rank0]: RuntimeError: boom", "RuntimeError: boom"),
        ("2022-03-21_13:34:34 what():  CUDA error: unknown error", "what(): CUDA error: unknown error"),
        (
            "[Mon Mar  4 10:12:01 2024] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
            "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
        ),
        ("[ 1234.567890] NVRM: Xid 79", "NVRM: Xid 79"),
        ("Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid 79", "NVRM: Xid 79"),
        ("2024-06-01T12:00:01.123Z  ERROR x", "ERROR x"),
        ("[1,0]<stderr>:NCCL WARN x", "NCCL WARN x"),
        ("RuntimeError: CUDA error: out of memory", "RuntimeError: CUDA error: out of memory"),
        ("\tfoo\t\tbar   baz  ", "foo bar baz"),
        ("node-12: not a rank prefix", "node-12: not a rank prefix"),
        ("> [rank3]: RuntimeError: boom", "RuntimeError: boom"),
        (">> quoted twice", "quoted twice"),
        ("a > b stays", "a > b stays"),
    ],
)
def test_prefixes_and_whitespace(line: str, expected: str) -> None:
    assert clean(line, 1 << 20).text == expected


def test_slack_markup_is_undone() -> None:
    text = "a &lt;b&gt; &amp;amp; <https://x.example/y|label> <@U123> <!channel> <#C1|ops>"
    assert unescape_slack(text) == "a <b> &amp; label @U123 @channel #ops"


def test_code_fences_removed_and_line_numbers_kept() -> None:
    paste = "```\nfirst\n[rank1]:second\n```"
    cleaned = clean(paste, 1 << 20)
    assert cleaned.text.split("\n") == ["", "first", "second", ""]
    assert len(cleaned.raw_lines) == 4
    offset = cleaned.text.index("second")
    assert cleaned.line_of(offset) == 2
    assert cleaned.clean_line(2) == "second"
    assert cleaned.raw_lines[2] == "[rank1]:second"


def test_console_text_is_not_slack_decoded() -> None:
    assert clean("x &lt; y", 1024, slack_encoded=False).text == "x &lt; y"


def test_size_cap_keeps_head_and_tail() -> None:
    data = b"HEAD\n" + b"x" * 10_000 + b"\nTAIL"
    cut = excerpt(data, 1000)
    assert cut.head.startswith(b"HEAD") and cut.tail.endswith(b"TAIL")
    assert cut.skipped_bytes == len(data) - 1000 and cut.size == 1000
    cleaned = clean(data, 1000)
    assert cleaned.truncated and cleaned.skipped_bytes == cut.skipped_bytes


def test_long_lines_keep_their_head_and_tail() -> None:
    cleaned = clean("y" * 100_000 + " GPU has fallen off the bus", 1 << 20)
    assert len(cleaned.raw_lines[0]) <= MAX_LINE_CHARS + 3
    assert cleaned.raw_lines[0].endswith("GPU has fallen off the bus") and cleaned.long_lines == 1


def test_binary_input_does_not_crash() -> None:
    blob = bytes(range(256)) * 200 + b"\nGPU has fallen off the bus\n"
    cleaned = clean(blob, 1 << 20)
    assert cleaned.binary
    assert "GPU has fallen off the bus" in cleaned.text


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert "ok" in clean(b"\xff\xfe ok \xc3", 1024).text


@pytest.mark.timing
def test_hostile_prefix_like_input_is_linear() -> None:
    hostile = ("[" * 50_000 + "rank" + "1" * 50_000 + "\n") * 20
    started = time.perf_counter()
    clean(hostile, 8 << 20)
    assert time.perf_counter() - started < 5.0
