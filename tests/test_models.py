"""The case model mirrors the library's JSON exactly, including fields it does not know yet."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from bot.model.case import Case, Localized, parse_timestamp

SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "000_22e41a9ff827b080.txt"
BUNDLED_SEED_COPY = Path(__file__).parent / "fixtures" / "seed_IL-0125.json"


def _seed() -> dict[str, object]:
    path = SEED if SEED.exists() else BUNDLED_SEED_COPY
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_seed_loads_and_dumps_back_verbatim() -> None:
    seed = _seed()
    case = Case.model_validate(seed)
    assert case.model_dump(mode="json") == seed
    assert case.id == "IL-0125"
    assert case.title.get("ko") is not None


def test_bundled_copy_of_seed_is_the_seed() -> None:
    if SEED.exists():
        assert json.loads(SEED.read_text(encoding="utf-8")) == json.loads(BUNDLED_SEED_COPY.read_text("utf-8"))


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
