"""Topics: the library's vocabulary normalized through the alias table, ``/incident topics``, ``/incident
topic nccl`` (newest review first, paginated), filters on search, and ``incident-bot topics``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import NOW

from bot.app.service import IncidentService
from bot.cli.main import main
from bot.library.case_store import CaseLibrary
from bot.library.topics import Vocabulary, alias_problems, parse_aliases
from bot.model.results import ReviewRecord
from bot.ops.clock import fixed
from bot.storage.memory import MemoryStorage


@pytest.fixture
def service(library: CaseLibrary) -> IncidentService:
    return IncidentService(library, MemoryStorage(), now=fixed(NOW))


def test_aliases_meet_under_one_topic(library: CaseLibrary) -> None:
    vocabulary = Vocabulary.of(library.summaries.values())
    [memory] = [t for t in vocabulary.by_kind("component") if t.name == "gpu-memory"]
    assert {"ecc", "gpu-ecc", "hbm3", "gpu-hbm"} <= set(memory.aliases)
    assert {"IL-0414", "IL-0427"} <= set(memory.cases)
    assert not any(t.name in {"ecc", "hbm3", "gpu-hbm"} for t in vocabulary.by_kind("component"))
    assert [t.key for t in vocabulary.resolve("component:ecc")] == ["component:gpu-memory"]


def test_the_shipped_alias_table_is_sound_and_a_bad_one_is_reported() -> None:
    assert alias_problems() == []
    _, problems = parse_aliases("component\tnccl\tgpu\ncomponent\tgpu\tx\ncomponent\tib\tmlx5\ncomponent\tnet\tmlx5\n")
    assert any("is both a topic and an alias" in p for p in problems)
    assert any("'mlx5' already belongs to 'ib'" in p for p in problems)


def test_cases_validate_reports_a_broken_alias_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table is read as package data: point the package's files at a copy with a topic made an alias."""
    import importlib.resources
    import shutil

    from bot.cli.main import main

    shipped = importlib.resources.files("bot.library")
    copy = tmp_path / "library"
    shutil.copytree(str(shipped), copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (copy / "topics.tsv").write_text("component\tgpu-memory\tecc\ncomponent\tecc\tx\n", encoding="utf-8")
    real_files = importlib.resources.files
    monkeypatch.setattr(importlib.resources, "files", lambda p: copy if p == "bot.library" else real_files(p))
    assert main(["cases", "validate"]) == 1
    out = capsys.readouterr().out
    assert "bot/library/topics.tsv" in out and "is both a topic and an alias" in out


def test_topic_lists_cases_newest_review_first_a_page_at_a_time(service: IncidentService) -> None:
    service.storage.add_review(ReviewRecord("PUB-0003", "U7", datetime(2026, 11, 30, tzinfo=UTC)))
    first = service.command("topic nccl")
    text = json.dumps(first.blocks)
    total = len(service.vocabulary().cases_of(service.vocabulary().resolve("nccl")))
    assert total > 10 and f"Topic nccl: {total} case(s)" in first.plain and "page 1 of 2" in first.plain
    assert first.plain.index("PUB-0003") < first.plain.index("PUB-0025")  # reviewed last week: first
    assert "next: /incident topic nccl 2" in text
    second = service.command("topic nccl 2")
    assert "page 2 of 2" in second.plain and "PUB-0003" not in second.plain
    assert len(first.blocks) <= 50


def test_cases_reviewed_at_the_same_time_go_newest_case_first(service: IncidentService) -> None:
    from bot.app.topics import newest_first

    summaries = service.library.summaries
    dated = sorted((s for s in summaries.values() if s.date), key=lambda s: s.date or "")
    older, newer = dated[0].id, dated[-1].id
    assert (summaries[older].date or "") < (summaries[newer].date or "")
    same = datetime(2026, 11, 30, tzinfo=UTC)
    assert newest_first([older, newer], summaries, {older: same, newer: same}) == [newer, older]
    later = {older: same.replace(day=29), newer: same.replace(day=28)}  # the review decides first
    assert newest_first([older, newer], summaries, later) == [older, newer]


@pytest.mark.parametrize("page", ["²", "٣", "9" * 5000])
def test_a_page_that_is_not_a_plain_number_is_part_of_the_words(service: IncidentService, page: str) -> None:
    said = service.command(f"topic nccl {page}").plain  # never a traceback
    assert "No topic" in said


def test_an_unknown_topic_gets_the_closest(service: IncidentService) -> None:
    reply = service.command("topic infinband")
    assert "No topic infinband" in reply.plain and "component:infiniband" in reply.plain


def test_topics_lists_every_kind_in_both_languages(service: IncidentService) -> None:
    english = service.command("topics")
    korean = service.command("topics", langs=("ko", "en"))
    for heading in ("Failure classes (class:)", "Components (component:)", "Root causes (cause:)", "Symptoms"):
        assert heading in english.plain
    nccl = next(t for t in service.vocabulary().resolve("component:nccl") if t.name == "nccl")
    assert "구성 요소 (component:)" in korean.plain and f"nccl ({len(nccl.cases)})" in korean.plain


def test_one_kind_is_listed_in_full_with_every_alias(service: IncidentService) -> None:
    classes = service.vocabulary().by_kind("class")
    assert len(classes) > 12  # more than the overview shows
    overview = service.command("topics").plain
    assert f"… +{len(classes) - 12}" in overview and "/incident topics class" in overview
    full = service.command("topics class").plain
    assert "…" not in full and all(f"{t.name} ({len(t.cases)})" in full for t in classes)
    with_aliases = [t for t in service.vocabulary().by_kind("component") if len(t.aliases) > 4]
    shown = service.command("topics component:").plain
    assert all(alias in shown for t in with_aliases for alias in t.aliases)


def test_search_takes_topic_filters(service: IncidentService) -> None:
    plain = service.command("search hang").plain
    filtered = service.command("search hang component:nccl").plain
    ids = [line.split()[0] for line in filtered.splitlines() if line.startswith("  ")]
    nccl = set(service.vocabulary().cases_of(service.vocabulary().resolve("component:nccl")))
    assert ids and set(ids) <= nccl
    assert "IL-0125" in plain
    only_filter = service.command("search symptom:link-flap").plain
    assert "IL-0238" in only_filter and "PUB-0019" in only_filter
    assert "No topic" in service.command("search hang component:nosuch").plain


def test_cli_topics_json(capsys: pytest.CaptureFixture[str], monkeypatch: Any, tmp_path: Any) -> None:
    for name in ("CASES_DIR", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    assert main(["topics", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"class", "component", "cause", "symptom"}
    nccl = next(t for t in data["component"] if t["name"] == "nccl")
    assert nccl["count"] == len(nccl["cases"]) and "hfreduce" in nccl["aliases"]
