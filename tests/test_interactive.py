"""The pure interactive module: button values (written, read back, forged), the match a language switch
rebuilds, buttons attached within Block Kit's limits, the Other matches reply, and the App Home view
within 100 blocks however large the library grows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import make_case

from bot.library.case_store import load_library
from bot.model.case import Case, Localized
from bot.model.results import Button, Evidence, Match, MatchResult, Reply, SuspectInfo, Tier
from bot.ops.settings import BUNDLED_CASES
from bot.replies.blocks import HOME_BLOCKS
from bot.replies.buttons import (
    ACTION_DETAILS,
    ACTION_HELPFUL,
    ACTION_LANG,
    ACTION_NOT_THIS,
    ACTION_OTHERS,
    VALUE_LIMIT,
    click_from_body,
    match_buttons,
    other_lang,
    parse_value,
    rebuild_result,
    with_buttons,
)
from bot.replies.clicks import other_matches_reply
from bot.replies.home import CaseVotes, FeedbackSummary, build_home_view
from bot.replies.render import match_reply

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return load_library(BUNDLED_CASES).cases


def _match(case_id: str, tier: str = "exact", score: int = 88, evidence: list[Evidence] | None = None) -> Match:
    return Match(
        case_id=case_id,
        title=Localized(en=case_id),
        failure_class=None,
        score=score,
        tier=Tier(tier),
        evidence=evidence or [],
    )


def _result(line: str = "RuntimeError: CUDA error: uncorrectable ECC error encountered", **extra: Any) -> MatchResult:
    evidence = Evidence(line=line, line_no=3, matched="uncorrectable ECC error", kind="signature", count=2)
    return MatchResult(
        matches=[
            _match("IL-0427", evidence=[evidence]),
            _match("IL-0414"),
            _match("PUB-0001", "weak", 40),
        ],
        reply=True,
        reply_case_ids=["IL-0427", "IL-0414"],
        **extra,
    )


def _values(buttons: list[Button]) -> dict[str, str]:
    return {b.action_id: b.value for b in buttons}


def test_match_buttons_and_their_values_round_trip() -> None:
    suspects = SuspectInfo(failed=True, summary="node gpu-a17, GPU 3", fills={"node": "gpu-a17"})
    buttons = match_buttons(_result(suspects=suspects), ("en", "ko"), reply_id=12, share=True)
    assert [b.action_id for b in buttons] == [
        ACTION_DETAILS,
        ACTION_HELPFUL,
        ACTION_NOT_THIS,
        ACTION_OTHERS,
        ACTION_LANG,
    ]
    assert [b.text for b in buttons] == ["Details", "Helpful", "Not this case", "Other matches", "한국어 먼저"]
    values = _values(buttons)
    assert all(len(v) <= VALUE_LIMIT for v in values.values())
    vote = parse_value(values[ACTION_HELPFUL])
    assert vote is not None and (vote.reply_id, vote.case_id, vote.langs) == (12, "IL-0427", ("en", "ko"))
    assert len(values[ACTION_HELPFUL]) < 60  # compact: no evidence in vote values
    others = parse_value(values[ACTION_OTHERS])
    assert others is not None and [r.case_id for r in others.runners] == ["IL-0414", "PUB-0001"]
    switch = parse_value(values[ACTION_LANG])
    assert switch is not None
    assert (switch.tier, switch.score, switch.share, switch.named) == ("exact", 88, True, ("IL-0414",))
    assert switch.evidence is not None and switch.evidence.line.endswith("encountered")
    assert switch.suspects == "node gpu-a17, GPU 3" and dict(switch.fills) == {"node": "gpu-a17"}


def test_korean_first_labels_and_no_other_matches_without_runner_ups() -> None:
    result = MatchResult(matches=[_match("IL-0427")], reply=True, reply_case_ids=["IL-0427"])
    buttons = match_buttons(result, ("ko", "en"))
    assert [b.text for b in buttons] == ["자세히", "도움됨", "이 사례 아님", "English first"]
    payload = parse_value(buttons[1].value)
    assert payload is not None and payload.reply_id is None and payload.langs == ("ko", "en")
    assert match_buttons(MatchResult(matches=[], reply=False), ("en", "ko")) == []


def test_pasted_mentions_never_travel_live_in_a_value() -> None:
    line = "<!channel> <@U123> & <https://evil.example|x> CUDA error"
    [*_, switch] = match_buttons(_result(line=line), ("en", "ko"))
    assert "<!channel>" not in switch.value and "<@U123>" not in switch.value
    payload = parse_value(switch.value)
    assert payload is not None and payload.evidence is not None and payload.evidence.line == line


def test_long_evidence_and_suspects_still_fit() -> None:
    line = "<&>" * 5000
    suspects = SuspectInfo(failed=True, summary="&" * 5000, fills={f"k{i}" * 30: "&" * 500 for i in range(40)})
    buttons = match_buttons(_result(line=line, suspects=suspects), ("en", "ko"), reply_id=2**40)
    assert len(buttons) == 5
    for button in buttons:
        assert len(button.value) <= VALUE_LIMIT
        assert parse_value(button.value) is not None


GOOD = json.dumps({"v": 1, "c": "IL-0427", "l": "en", "r": 5})
FORGED = [
    None,
    "",
    42,
    "not json",
    "[1, 2]",
    "{}",
    json.dumps({"v": 2, "c": "IL-0427", "l": "en"}),  # unknown version
    json.dumps({"v": 1, "c": "IL-0427", "l": "fr"}),  # unknown language
    json.dumps({"v": 1, "c": "", "l": "en"}),
    json.dumps({"v": 1, "c": "x" * 65, "l": "en"}),
    json.dumps({"v": 1, "c": ["IL-0427"], "l": "en"}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "r": 0}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "r": -3}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "r": True}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "r": "5"}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "r": 10**30}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "t": "certain"}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "s": 101}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "o": [["IL-0414", "exact"]]}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "o": [["IL-0414", "exact", 88]] * 7}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "e": ["line", 1, "m"]}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "f": {"k": 1}}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "h": 2}),
    json.dumps({"v": 1, "c": "IL-0427", "l": "en", "admin": True}),  # unknown key
    GOOD[:-1] + " " * 2000 + "}",  # over Slack's limit
    "[" * 1999,
    '{"v": 1, "c": "IL-0427", "l": "en", "r": 1e400}',
    '{"v": 1, "c": "IL-0427", "l": "en", "r": NaN}',
]


@pytest.mark.parametrize("value", FORGED)
def test_forged_values_parse_to_none(value: object) -> None:
    assert parse_value(value) is None


def test_a_good_value_parses() -> None:
    payload = parse_value(GOOD)
    assert payload is not None and payload.reply_id == 5


def test_rebuilt_result_renders_like_the_original_in_the_other_language(cases: dict[str, Case]) -> None:
    original = _result()
    [*_, switch] = match_buttons(original, ("en", "ko"))
    payload = parse_value(switch.value)
    assert payload is not None
    rebuilt = rebuild_result(payload, cases)
    assert rebuilt is not None
    assert [m.case_id for m in rebuilt.matches] == ["IL-0427", "IL-0414", "PUB-0001"]
    assert rebuilt.reply_case_ids == ["IL-0427", "IL-0414"]
    langs = other_lang(payload.langs)
    assert langs == ("ko", "en")
    first = match_reply(original, cases, ("en", "ko"), explicit=True)
    again = match_reply(rebuilt, cases, langs, explicit=True)
    # Line 1 names the failure in each reader's language, then the same case.
    assert "· IL-0427 —" in first.blocks[0]["text"]["text"] and "· IL-0427 —" in again.blocks[0]["text"]["text"]
    text = json.dumps(again.blocks, ensure_ascii=False)
    assert text.index("정확히 일치") < text.index("exact match")
    assert "uncorrectable ECC error encountered" in text


def test_rebuild_needs_the_best_case_in_the_library(cases: dict[str, Case]) -> None:
    payload = parse_value(json.dumps({"v": 1, "c": "IL-9999", "l": "en", "t": "exact", "s": 90}))
    assert payload is not None and rebuild_result(payload, cases) is None
    vote_only = parse_value(json.dumps({"v": 1, "c": "IL-0427", "l": "en"}))
    assert vote_only is not None and rebuild_result(vote_only, cases) is None  # no tier: not a switch value


def test_with_buttons_merges_into_the_trailing_actions_block_within_limits() -> None:
    reply = Reply(text="t", blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "x"}}] * 50, plain="t")
    one = with_buttons(reply, [Button(action_id="a", text="A" * 200, value="v" * 3000)])
    assert len(one.blocks) == 50 and one.blocks[-1]["type"] == "actions"
    [element] = one.blocks[-1]["elements"]
    assert len(element["text"]["text"]) <= 75 and len(element["value"]) <= VALUE_LIMIT
    two = with_buttons(one, [Button(action_id="share", text="Share")], first=True)
    assert [e["action_id"] for e in two.blocks[-1]["elements"]] == ["share", "a"]
    many = with_buttons(two, [Button(action_id=f"b{i}", text="b") for i in range(40)])
    assert len(many.blocks[-1]["elements"]) == 25
    assert with_buttons(reply, []) is reply


def test_other_matches_reply_lists_runner_ups_escaped(cases: dict[str, Case]) -> None:
    [_, _, _, others, _] = match_buttons(_result(), ("en", "ko"))
    payload = parse_value(others.value)
    assert payload is not None
    reply = other_matches_reply(payload, cases)
    assert reply.case_ids == ["IL-0414", "PUB-0001"]
    assert reply.blocks[0]["text"]["text"] == "Other matches for IL-0427"
    text = json.dumps(reply.blocks, ensure_ascii=False)
    assert "exact match, 88/100" in text and "weak match, 40/100" in text
    ko = parse_value(json.dumps({"v": 1, "c": "IL-0427", "l": "ko", "o": [["IL-9999", "weak", 40]]}))
    assert ko is not None
    empty = other_matches_reply(ko, cases)  # the only runner-up left the library
    assert empty.blocks[0]["text"]["text"] == "IL-0427 외의 다른 후보" and empty.case_ids == []


def test_click_from_body_never_raises() -> None:
    assert click_from_body({}).action_id == ""
    weird = {"actions": "x", "container": [], "user": None, "channel": 3, "message": "m"}
    assert click_from_body(weird).channel_id == ""
    body = {
        "actions": [{"action_id": ACTION_LANG, "value": "v"}],
        "container": {"channel_id": "C9", "message_ts": "1.2", "is_ephemeral": True},
        "user": {"id": "U1"},
    }
    click = click_from_body(body)
    assert (click.action_id, click.value, click.user_id, click.channel_id, click.message_ts, click.ephemeral) == (
        ACTION_LANG,
        "v",
        "U1",
        "C9",
        "1.2",
        True,
    )


def _texts(view: dict[str, Any]) -> list[str]:
    out = []
    for block in view["blocks"]:
        if "text" in block:
            out.append(block["text"]["text"])
        out += [e["text"] for e in block.get("elements", []) if "text" in e]
    return out


def test_home_view_stays_within_limits_for_2000_huge_cases() -> None:
    huge = "<!channel> " + "긴 제목 & title " * 400
    library = [
        make_case(f"IL-{i:04d}", f"2026-{1 + i % 12:02d}-01", title={"en": huge, "ko": huge}, url=None)
        for i in range(2000)
    ]
    votes = FeedbackSummary(tuple(CaseVotes(c.id, huge, i % 7, i % 5) for i, c in enumerate(library)))
    for langs in (("en", "ko"), ("ko", "en")):
        view = build_home_view(library, [(c, 2000 - i) for i, c in enumerate(library)], votes, langs)
        assert view["type"] == "home" and len(view["blocks"]) <= HOME_BLOCKS
        assert len(json.dumps(view, ensure_ascii=False)) < 30_000
        for block in view["blocks"]:
            if block["type"] == "header":
                assert len(block["text"]["text"]) <= 150
            if block["type"] == "section":
                assert len(block["text"]["text"]) <= 3000
        assert not any("<!channel>" in t for t in _texts(view))
    english = build_home_view(library, [(library[0], 5)], votes, ("en", "ko"))
    text = "\n".join(_texts(english))
    assert "Recently reviewed cases" in text and "Matched most in the last 30 days" in text
    assert "and 1990 more" in text  # the recent list was given all 2000
    assert "helpful" in text and "Most often" in text


def test_home_view_when_nothing_happened_yet() -> None:
    view = build_home_view([], [], FeedbackSummary(), ("ko", "en"))
    text = "\n".join(_texts(view))
    assert "아직 없습니다." in text and "아직 투표가 없습니다." in text


def test_most_rejected_orders_by_rejections_then_share() -> None:
    summary = FeedbackSummary(
        (
            CaseVotes("A", "a", 9, 3),
            CaseVotes("B", "b", 0, 3),
            CaseVotes("C", "c", 5, 0),
            CaseVotes("D", "d", 0, 4),
        )
    )
    assert [c.case_id for c in summary.most_rejected()] == ["D", "B", "A"]
    assert (summary.helpful, summary.not_helpful) == (14, 10)
