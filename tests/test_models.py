"""The case model mirrors the library's JSON exactly, including fields it does not know yet."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from bot.model.case import Case, Localized, parse_timestamp

# The library's own JSON for IL-0125, as its API served it (kept in the repository, so this runs anywhere).
SEED = Path(__file__).parent / "fixtures" / "seed_IL-0125.json"
BUNDLED = Path(__file__).resolve().parent.parent / "cases" / "IL-0125.json"
LOCAL_FIELDS = {"failure_class", "signatures", "runbook", "gist", "review_notes"}


def _seed() -> dict[str, object]:
    data: dict[str, object] = json.loads(SEED.read_text(encoding="utf-8"))
    return data


def test_seed_loads_and_dumps_back_verbatim() -> None:
    seed = _seed()
    case = Case.model_validate(seed)
    assert case.model_dump(mode="json") == seed
    assert case.id == "IL-0125"
    assert case.title.get("ko") is not None


def test_the_bundled_case_is_the_seed_plus_local_fields() -> None:
    """The library's fields as the library sent them, except what this project adds on top and a sync keeps:
    the severity on the bot's scale where the library says "unknown", and sources appended after the
    library's own (the primary documents behind the runbook)."""
    bundled = json.loads(BUNDLED.read_text(encoding="utf-8"))
    seed = _seed()
    assert set(bundled) - set(seed) == LOCAL_FIELDS
    assert seed["severity"] == "unknown" and bundled["severity"] in ("job", "node", "fleet")
    assert bundled["sources"][: len(seed["sources"])] == seed["sources"]
    added = {"severity", "sources"}
    assert {k: v for k, v in bundled.items() if k not in LOCAL_FIELDS | added} == {
        k: v for k, v in seed.items() if k not in added
    }


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda d: d.__setitem__("new_top_level", {"nested": [1, 2, {"x": None}]}), id="top-level"),
        pytest.param(lambda d: d["impact"].__setitem__("currency", "USD"), id="nested-object"),
        pytest.param(lambda d: d["remediation"][0]["text"].__setitem__("ja", "再起動"), id="localized-extra-lang"),
        pytest.param(lambda d: d["sources"][0].__setitem__("retrieved_at", "2026-01-01"), id="list-item"),
        pytest.param(lambda d: d["review"].__setitem__("score", 4.5), id="review"),
    ],
)
def test_unknown_fields_survive_a_round_trip(mutate: object) -> None:
    data = copy.deepcopy(_seed())
    mutate(data)  # type: ignore[operator]
    assert Case.model_validate(data).model_dump(mode="json") == data


def test_a_case_missing_a_language_still_loads() -> None:
    data = copy.deepcopy(_seed())
    data["title"] = {"ko": "한국어 제목만 있다"}
    case = Case.model_validate(data)
    assert case.title.get("en") is None
    assert case.title.langs() == ("ko",)
    assert case.model_dump(mode="json")["title"] == {"ko": "한국어 제목만 있다"}


def test_blank_text_counts_as_missing() -> None:
    assert Localized(en="   ", ko="있음").langs() == ("ko",)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-11-09T11:55:48.683647Z", "2026-11-09T11:55:48.683647+00:00"),
        ("2026-11-09", "2026-11-09T00:00:00+00:00"),
        ("2026-11-09T09:00:00+09:00", "2026-11-09T09:00:00+09:00"),
        ("2026-11-09T09:00:00", "2026-11-09T09:00:00+00:00"),
    ],
)
def test_review_timestamps_parse_to_aware_datetimes(raw: str, expected: str) -> None:
    parsed = parse_timestamp(raw)
    assert parsed is not None
    assert parsed.isoformat() == expected


@pytest.mark.parametrize("raw", [None, "", "last tuesday", "2026-13-40"])
def test_junk_timestamps_are_none(raw: str | None) -> None:
    assert parse_timestamp(raw) is None
